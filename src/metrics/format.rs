//! The two text formats `/metrics` answers in, chosen by the request's
//! `Accept` header.
//!
//! `prometheus-client` encodes OpenMetrics 1.0 only. Prometheus asks for it
//! first, but `promtool check metrics`, curl, most scrapers other than
//! Prometheus, and anything sending `Accept: text/plain;version=0.0.4` read
//! the Prometheus text format 0.0.4. The two differ in how a counter is
//! named: OpenMetrics names the family `foo` and its sample `foo_total`;
//! 0.0.4 has no families, so its `# HELP` and `# TYPE` lines name the
//! sample, `foo_total`, or a reader sees a sample without help and a
//! counter without samples. 0.0.4 also has no `# UNIT` line, no `# EOF`,
//! and calls `unknown` `untyped`. Samples are written alike in both (the
//! same label escapes, `+Inf`, numbers), so [`Format::Text`] is the
//! OpenMetrics text with those comment lines rewritten: a fixed
//! transformation, not a second encoder to keep in step with the first.
//!
//! A client that names no format (no `Accept`, or `*/*`) gets 0.0.4, the
//! format every Prometheus-compatible reader understands; OpenMetrics goes
//! to a client that accepts it at least as much as the text format.

use std::collections::HashSet;

/// A format of `/metrics`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// OpenMetrics 1.0 text, as `prometheus-client` encodes it.
    OpenMetrics,
    /// The Prometheus text format 0.0.4.
    Text,
}

const OPENMETRICS: &str = "application/openmetrics-text";

impl Format {
    /// The format for a request with this `Accept` header (`None`: none).
    pub fn negotiate(accept: Option<&str>) -> Format {
        let (mut openmetrics, mut text) = (0.0f32, 0.0f32);
        for range in accept.unwrap_or("").split(',') {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.split_once('='))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case("q"))
                .map_or(1.0, |(_, v)| v.trim().parse().unwrap_or(0.0));
            match media.as_str() {
                OPENMETRICS => openmetrics = openmetrics.max(q),
                "text/plain" | "text/*" | "*/*" => text = text.max(q),
                _ => {}
            }
        }
        if openmetrics > 0.0 && openmetrics >= text {
            Format::OpenMetrics
        } else {
            Format::Text
        }
    }

    /// The `Content-Type` of an answer in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Text => "text/plain; version=0.0.4; charset=utf-8",
        }
    }

    /// `openmetrics` (the registry's encoding) in this format.
    pub fn rewrite(self, openmetrics: String) -> String {
        match self {
            Format::OpenMetrics => openmetrics,
            Format::Text => to_text(&openmetrics),
        }
    }
}

/// The Prometheus text format 0.0.4 of an OpenMetrics text: the same
/// samples; a counter's `# HELP` and `# TYPE` name its `_total` sample; no
/// `# UNIT`, no `# EOF`. A sample line never starts with `#` and holds no
/// raw newline (label values are escaped), so the lines can be told apart.
fn to_text(openmetrics: &str) -> String {
    let counters: HashSet<&str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(openmetrics.len() + 16 * counters.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let comment = ["# HELP ", "# TYPE "]
            .into_iter()
            .find_map(|p| line.strip_prefix(p).map(|rest| (p, rest)));
        match comment.and_then(|(p, rest)| Some((p, rest.split_once(' ')?))) {
            Some((p, (name, rest))) => {
                let total = if counters.contains(name) {
                    "_total"
                } else {
                    ""
                };
                let rest = if p == "# TYPE " && rest == "unknown" {
                    "untyped"
                } else {
                    rest
                };
                out.extend([p, name, total, " ", rest]);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// What promtool checks first: every sample of `page` (OpenMetrics, as
/// rendered) has `# HELP` and `# TYPE` under its own name in the text
/// format (a histogram's under its family's), and every help text is one
/// line without `\` or `"`, which the two formats would escape
/// differently. For the tests of every domain's metrics.
#[cfg(test)]
pub(crate) fn assert_described(page: &str) {
    let text = Format::Text.rewrite(page.to_string());
    let described = |kind: &str, name: &str| {
        text.lines().any(|l| {
            l.strip_prefix(kind)
                .and_then(|l| l.strip_prefix(name))
                .is_some_and(|l| l.starts_with(' '))
        })
    };
    for sample in text.lines().filter(|l| !l.starts_with('#')) {
        let name = sample.split(['{', ' ']).next().unwrap();
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s).filter(|f| described("# TYPE ", f)))
            .unwrap_or(name);
        assert!(described("# HELP ", family), "{sample}: no HELP\n{text}");
        assert!(described("# TYPE ", family), "{sample}: no TYPE\n{text}");
    }
    for help in text.lines().filter_map(|l| l.strip_prefix("# HELP ")) {
        assert!(!help.contains(['\\', '"']), "{help}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Kind, LabelValue, Labels, Metrics};
    use prometheus_client::metrics::counter::Counter;
    use prometheus_client::metrics::family::Family;
    use std::time::Duration;

    #[test]
    fn the_accept_header_chooses() {
        let om = Format::OpenMetrics;
        let text = Format::Text;
        // What Prometheus 2.x sends by default.
        let prometheus = "application/openmetrics-text;version=1.0.0;q=0.5,\
            application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,\
            */*;q=0.2";
        for (accept, want) in [
            (Some(prometheus), om),
            (Some("application/openmetrics-text"), om),
            (Some("Application/OpenMetrics-Text; version=1.0.0"), om),
            (Some("text/plain;version=0.0.4"), text),
            (
                Some("text/plain;version=0.0.4;q=0.9, application/openmetrics-text;q=0.5"),
                text,
            ),
            (Some("application/openmetrics-text;q=0"), text),
            (Some("*/*"), text),
            (Some("application/json"), text),
            (Some(""), text),
            (None, text),
        ] {
            assert_eq!(Format::negotiate(accept), want, "{accept:?}");
        }
    }

    #[test]
    fn text_names_the_counter_samples_and_drops_unit_and_eof() {
        let m = Metrics::new(Kind::Run);
        m.renewed(Duration::from_millis(3));
        let om = m.render();
        assert!(om.contains("# TYPE yaraus_renewals counter\n"), "{om}");
        let text = Format::Text.rewrite(om.clone());
        for line in [
            "# HELP yaraus_renewals_total Successful renewals of a claim.",
            "# TYPE yaraus_renewals_total counter",
            "yaraus_renewals_total 1",
            "# TYPE yaraus_renewal_latency_seconds histogram",
            "# TYPE yaraus_claims_held gauge",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
        assert!(
            !text.contains("# UNIT") && !text.contains("# EOF"),
            "{text}"
        );
        assert_eq!(Format::OpenMetrics.rewrite(om.clone()), om);
    }

    #[test]
    fn every_sample_has_help_and_type_in_the_text_format() {
        for kind in [Kind::SeqServe, Kind::HiloAgent, Kind::Index, Kind::Run] {
            let m = Metrics::new(kind);
            m.claim_held(true);
            let family = m.register(|r| {
                let family = Family::<Labels, Counter>::default();
                r.register("things", "Things, per name", family.clone());
                family
            });
            let name = [("name", LabelValue::new("a"))];
            family.unwrap().get_or_create(&name).inc();
            assert_described(&m.render());
        }
    }
}
