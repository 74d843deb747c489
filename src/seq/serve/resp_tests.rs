//! The parser against valid requests cut anywhere, random bytes and
//! hostile headers, with a deterministic generator: every outcome is a
//! request, a wait for more, or a protocol error; never a panic, never a
//! buffer beyond the limits.

use super::*;
use crate::seq::serve::reply::{array, bulk};

/// xorshift64*: deterministic, good enough to cut and scramble frames.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn encode(args: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    array(&mut out, args.len());
    for a in args {
        bulk(&mut out, a);
    }
    out
}

/// Feeds `input` to a parser in pieces of the given sizes; every request
/// parsed, and the error if one came.
fn feed(input: &[u8], pieces: &mut dyn FnMut() -> usize) -> (Vec<Request>, Option<ProtocolError>) {
    let mut parser = Parser::default();
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut at = 0;
    while at < input.len() {
        let n = pieces().clamp(1, input.len() - at);
        buf.extend_from_slice(&input[at..at + n]);
        at += n;
        loop {
            match parser.next(&mut buf) {
                Ok(Some(req)) => out.push(req),
                Ok(None) => break,
                Err(e) => return (out, Some(e)),
            }
        }
        assert!(
            buf.len() <= MAX_REQUEST + n + 2,
            "buffer grew to {} bytes",
            buf.len()
        );
    }
    (out, None)
}

#[test]
fn requests_cut_at_every_place_come_out_whole() {
    let frames: Vec<Vec<&[u8]>> = vec![
        vec![b"INCR", b"orders"],
        vec![b"INCRBY", b"orders", b"10"],
        vec![b"PING"],
        vec![b"ECHO", b"with\r\nnewline and \0 nul"],
        vec![b"GET", b""],
    ];
    let mut input = Vec::new();
    for f in &frames {
        input.extend(encode(f));
    }
    input.extend_from_slice(b"PING\r\n\r\n  ECHO   hi \n");
    let mut want: Vec<Request> = frames
        .iter()
        .map(|f| f.iter().map(|a| a.to_vec()).collect())
        .collect();
    want.push(vec![b"PING".to_vec()]);
    want.push(vec![b"ECHO".to_vec(), b"hi".to_vec()]);
    for size in 1..input.len() {
        let (got, err) = feed(&input, &mut || size);
        assert_eq!(err, None, "pieces of {size}");
        assert_eq!(got, want, "pieces of {size}");
    }
    let mut rng = Rng(0x5eed);
    for _ in 0..2000 {
        let (got, err) = feed(&input, &mut || 1 + rng.below(40));
        assert_eq!(err, None);
        assert_eq!(got, want);
    }
}

#[test]
fn random_bytes_and_truncated_frames_never_panic_nor_overgrow() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let valid = encode(&[b"INCRBY", b"orders", b"12345"]);
    for round in 0..20_000 {
        let mut input: Vec<u8> = match round % 4 {
            // Pure noise, biased towards the protocol's own bytes.
            0 => (0..rng.below(300))
                .map(|_| b"*$\r\n0123456789-:+ abc\xff"[rng.below(20)])
                .collect(),
            // A valid request, truncated.
            1 => valid[..rng.below(valid.len())].to_vec(),
            // A valid request with one byte changed.
            2 => {
                let mut v = valid.clone();
                let i = rng.below(v.len());
                v[i] = rng.next() as u8;
                v
            }
            // Random bytes of every value.
            _ => (0..rng.below(300)).map(|_| rng.next() as u8).collect(),
        };
        if round % 7 == 0 {
            input.extend_from_slice(&valid);
        }
        let (got, _) = feed(&input, &mut || 1 + rng.below(64));
        for req in got {
            assert!(req.len() <= MAX_ARGS);
            assert!(req.iter().map(Vec::len).sum::<usize>() <= MAX_REQUEST);
        }
    }
}

#[test]
fn hostile_headers_are_refused_before_any_body_is_read() {
    let cases: [(&[u8], &str); 8] = [
        (b"*1\r\n$1073741824\r\n", "invalid bulk length"),
        (b"*1\r\n$-5\r\n", "invalid bulk length"),
        (b"*1\r\n$abc\r\n", "invalid bulk length"),
        (b"*99999999\r\n", "invalid multibulk length"),
        (b"*abc\r\n", "invalid multibulk length"),
        (b"*1\r\n+PING\r\n", "expected '$', got '+'"),
        (b"*1\r\n$4\r\nPINGxx", "expected CRLF after a bulk string"),
        (b"*1\r\n$65537\r\n", "invalid bulk length"),
    ];
    for (input, want) in cases {
        let (_, err) = feed(input, &mut || 1);
        assert_eq!(err, Some(ProtocolError(want.into())), "{input:?}");
    }
    // Two bulks that each fit but not together.
    let mut two = b"*2\r\n$65536\r\n".to_vec();
    two.extend(std::iter::repeat_n(b'x', 65536));
    two.extend_from_slice(b"\r\n$1\r\n");
    let (_, err) = feed(&two, &mut || 4096);
    assert_eq!(err, Some(ProtocolError("request too big".into())));
    // A line that never ends.
    let endless = vec![b'x'; MAX_REQUEST + 10];
    let (_, err) = feed(&endless, &mut || 1000);
    assert_eq!(err, Some(ProtocolError("too big inline request".into())));
    let endless = [b"*".as_slice(), &[b'1'; 40]].concat();
    let (_, err) = feed(&endless, &mut || 1);
    assert_eq!(
        err,
        Some(ProtocolError("too big multibulk count string".into()))
    );
}

#[test]
fn empty_arrays_are_skipped() {
    let (got, err) = feed(b"*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n", &mut || 3);
    assert_eq!(err, None);
    assert_eq!(got, vec![vec![b"PING".to_vec()]]);
}
