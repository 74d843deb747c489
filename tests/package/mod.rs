//! The operator package: `scripts/package.sh --binary` packages
//! the debug binary `cargo test` built (no second, fat-LTO build), and the
//! `.deb` is checked as an operator would meet it:
//!
//! 1. its contents (`dpkg-deb -c`): the binary, every man page gzipped,
//!    the bash/zsh/fish completions, the three systemd templates, the
//!    copyright, changelogs, docs and example env files;
//! 2. `lintian`: no error (its one warning, `initial-upload-closes-no-bugs`,
//!    is about uploads to Debian's archive, which this package is not);
//! 3. `dpkg -i`, then `systemd-analyze verify` of an instance of each
//!    installed unit (no warning either), `/usr/bin/yaraus --version`, and
//!    `dpkg -r`, after which neither the binary nor the units are left
//!    (and `dpkg --purge`, which removes the empty /etc/yaraus).
//!
//! This machine's PID 1 is not systemd (a container), so the units cannot
//! be started. Instead each unit's `ExecStart=` line is read from the
//! installed file, expanded as systemd does (`$VAR` split at whitespace,
//! `${VAR}` one word; `Environment=`, then the env file), and run directly
//! with the environment systemd would give it: the variables of an env
//! file as docs/service.md writes them, and `$CREDENTIALS_DIRECTORY` holding
//! the `redis-password` credential (mode 0440, as systemd's ACL shows it),
//! against a real redis-server (from tests/common) that requires that
//! password and persists every write. `seq serve` must send READY=1 to
//! `$NOTIFY_SOCKET`, answer INCR, send STOPPING=1 at SIGTERM and exit 0;
//! the hilo agent must open windows and exit 0 at SIGTERM; `yaraus run`
//! must lease an id, start the command with it, and at SIGTERM (what
//! `KillMode=mixed` sends it alone) stop the command, release the id and
//! exit 143, which the unit lists in `SuccessExitStatus=`.
//!
//! Every tool it needs (dpkg-dev, lintian, systemd-analyze, strip,
//! cargo-deb) comes from scripts/install-test-tools.sh; a missing one fails
//! the test. It must run as root (dpkg -i).

use crate::common;

use common::scratch::Scratch;
use common::{EVENT, RedisServer, ServerOptions, command, free_port, tools, wait_until};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::process::{Child, Command, Stdio};

const UNIT_DIR: &str = "/lib/systemd/system";
const UNITS: [&str; 3] = [
    "yaraus-seq-serve@.service",
    "yaraus-hilo-agent@.service",
    "yaraus-run@.service",
];
const PASSWORD: &str = "pkg-test-s3cret";

/// Runs `cmd` to its end; panics with both outputs unless it succeeds.
fn ok(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{cmd:?}: {}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Removes the package if the test stops before its own `dpkg -r`.
struct Installed(bool);

impl Drop for Installed {
    fn drop(&mut self) {
        if self.0 {
            let _ = command("dpkg").args(["-r", "yaraus"]).output();
        }
    }
}

#[test]
fn the_deb_lints_installs_verifies_runs_its_units_and_removes() {
    for (tool, package) in [
        ("dpkg-deb", "dpkg-dev"),
        ("dpkg-shlibdeps", "dpkg-dev"),
        ("strip", "binutils"),
        ("lintian", "lintian"),
        ("systemd-analyze", "systemd"),
        ("dpkg", "dpkg"),
    ] {
        tools::require_test_tool(tool, package, "tests/package checks the .deb with it");
    }
    let cargo_deb = command("cargo").args(["deb", "--version"]).output();
    assert!(
        cargo_deb.is_ok_and(|o| o.status.success()),
        "cargo-deb is missing: scripts/package.sh builds the .deb with it. Install it with \
         scripts/install-test-tools.sh"
    );
    assert!(
        // /proc/self belongs to the process's effective user.
        std::os::unix::fs::MetadataExt::uid(&fs::metadata("/proc/self").unwrap()) == 0,
        "tests/package installs the .deb (dpkg -i): run it as root"
    );

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let stdout = ok(command(root.join("scripts/package.sh")).args([
        "--binary",
        env!("CARGO_BIN_EXE_yaraus"),
        "--fast",
    ]));
    let deb = root.join(stdout.lines().last().expect("package.sh printed nothing"));
    assert!(
        deb.is_file(),
        "package.sh's last line is not the .deb: {stdout}"
    );

    check_contents(&deb);
    check_lintian(&deb);

    let mut installed = Installed(true);
    ok(command("dpkg").arg("-i").arg(&deb));
    let version = ok(command("/usr/bin/yaraus").arg("--version"));
    // `yaraus 0.1.0 (rev abc1234)`, then the features (build.rs).
    let first = version.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("yaraus {} ", env!("CARGO_PKG_VERSION"))),
        "{version}"
    );
    let meta = fs::metadata("/etc/yaraus").expect("postinst makes /etc/yaraus");
    assert_eq!(meta.permissions().mode() & 0o777, 0o700, "/etc/yaraus");
    verify_units();

    let server = RedisServer::start_with(ServerOptions {
        tcp: true,
        requirepass: Some(PASSWORD.to_string()),
        appendfsync_always: true,
        ..ServerOptions::default()
    });
    let url = format!("redis://127.0.0.1:{}/0", server.port().unwrap());
    let scratch = Scratch::new();
    let creds = scratch.path("credentials");
    fs::create_dir(&creds).unwrap();
    let cred = creds.join("redis-password");
    fs::write(&cred, format!("{PASSWORD}\n")).unwrap();
    fs::set_permissions(&cred, fs::Permissions::from_mode(0o440)).unwrap();

    seq_serve(&url, &scratch);
    hilo_agent(&url, &scratch, &server);
    run_worker(&url, &scratch);

    ok(command("dpkg").args(["-r", "yaraus"]));
    installed.0 = false;
    assert!(
        !Path::new("/usr/bin/yaraus").exists(),
        "dpkg -r left the binary"
    );
    for unit in UNITS {
        assert!(
            !Path::new(UNIT_DIR).join(unit).exists(),
            "dpkg -r left {unit}"
        );
    }
    // The purge removes /etc/yaraus, which the test left empty.
    ok(command("dpkg").args(["--purge", "yaraus"]));
    assert!(
        !Path::new("/etc/yaraus").exists(),
        "dpkg --purge left /etc/yaraus"
    );
}

fn check_contents(deb: &Path) {
    let listing = ok(command("dpkg-deb").arg("-c").arg(deb));
    let paths: Vec<&str> = listing
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    let has = |p: &str| paths.iter().any(|q| q.trim_start_matches('.') == p);
    let mut expected = vec![
        "/usr/bin/yaraus".to_string(),
        "/usr/share/bash-completion/completions/yaraus".into(),
        "/usr/share/zsh/vendor-completions/_yaraus".into(),
        "/usr/share/fish/vendor_completions.d/yaraus.fish".into(),
        "/usr/share/doc/yaraus/copyright".into(),
        "/usr/share/doc/yaraus/changelog.gz".into(),
        "/usr/share/doc/yaraus/changelog.Debian.gz".into(),
        "/usr/share/doc/yaraus/service.md.gz".into(),
        "/usr/share/doc/yaraus/examples/katsubushi.env".into(),
    ];
    for unit in UNITS {
        expected.push(format!("{UNIT_DIR}/{unit}"));
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for page in fs::read_dir(root.join("man")).unwrap() {
        let name = page.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".1") {
            expected.push(format!("/usr/share/man/man1/{name}.gz"));
        }
    }
    assert!(expected.len() > 15, "no man pages found: {expected:?}");
    for p in &expected {
        assert!(has(p), "the .deb lacks {p}:\n{listing}");
    }
}

fn check_lintian(deb: &Path) {
    let out = command("lintian")
        .arg(deb)
        .output()
        .expect("cannot run lintian");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("lintian:\n{text}");
    let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("E:")).collect();
    assert!(errors.is_empty(), "lintian reports errors:\n{text}");
    // lintian exits 1 on errors (and 2 when it cannot run), not on warnings.
    assert_eq!(out.status.code(), Some(0), "lintian:\n{text}");
}

fn verify_units() {
    let instances: Vec<String> = UNITS.iter().map(|u| u.replace("@.", "@test.")).collect();
    let out = command("systemd-analyze")
        .arg("verify")
        .args(&instances)
        .output()
        .expect("cannot run systemd-analyze");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.trim().is_empty(),
        "systemd-analyze verify {instances:?}: {}\n{stderr}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The `KEY=value` lines of a unit file, in order, every section.
fn unit_settings(unit: &str) -> Vec<(String, String)> {
    let text = fs::read_to_string(Path::new(UNIT_DIR).join(unit)).unwrap();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#') && !l.starts_with('['))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn setting<'a>(settings: &'a [(String, String)], key: &str) -> Vec<&'a str> {
    settings
        .iter()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .collect()
}

/// The process a unit's `ExecStart=` starts, with `env_file` as the text of
/// /etc/yaraus/%i.env, the credentials directory and `extra` variables
/// (those systemd sets itself, as NOTIFY_SOCKET). Its stderr goes to
/// `log` in `scratch`.
fn start_unit(
    unit: &str,
    env_file: &str,
    scratch: &Scratch,
    extra: &[(&str, String)],
    log: &str,
) -> Child {
    let settings = unit_settings(unit);
    for (key, value) in [
        ("EnvironmentFile", "/etc/yaraus/%i.env"),
        ("LoadCredential", "redis-password:/etc/yaraus/%i.password"),
        ("DynamicUser", "yes"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("NoNewPrivileges", "yes"),
        ("Restart", "on-failure"),
    ] {
        assert_eq!(setting(&settings, key), [value], "{unit}: {key}=");
    }
    // Environment= first, the env file over it (systemd's order).
    let mut env = BTreeMap::new();
    for line in setting(&settings, "Environment") {
        let (k, v) = line.split_once('=').unwrap();
        env.insert(k.to_string(), v.to_string());
    }
    for line in env_file.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (k, v) = line.split_once('=').unwrap();
        env.insert(k.to_string(), v.to_string());
    }
    let exec = setting(&settings, "ExecStart");
    assert_eq!(exec.len(), 1, "{unit}: one ExecStart=");
    let argv = expand(exec[0], &env);
    eprintln!("{unit}: {argv:?}");
    let mut cmd = command(&argv[0]);
    cmd.args(&argv[1..])
        .env_clear()
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .envs(&env)
        .env("CREDENTIALS_DIRECTORY", scratch.path("credentials"))
        .envs(extra.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(scratch.path(log)).unwrap());
    cmd.spawn()
        .unwrap_or_else(|e| panic!("{unit}: {argv:?}: {e}"))
}

/// An `ExecStart=` line as systemd expands it: a word `$NAME` becomes the
/// variable's words (split at whitespace, none if unset), a word `${NAME}`
/// its value as one word. The units use no other form (the test says so).
fn expand(line: &str, env: &BTreeMap<String, String>) -> Vec<String> {
    let mut argv = Vec::new();
    for word in line.split_whitespace() {
        if let Some(name) = word.strip_prefix("${").and_then(|w| w.strip_suffix('}')) {
            argv.push(env.get(name).cloned().unwrap_or_default());
        } else if let Some(name) = word.strip_prefix('$') {
            let value = env.get(name).map(String::as_str).unwrap_or("");
            argv.extend(value.split_whitespace().map(String::from));
        } else {
            assert!(
                !word.contains('$'),
                "ExecStart word {word:?}: unsupported here"
            );
            argv.push(word.to_string());
        }
    }
    argv
}

/// Waits for `child` to exit within [`EVENT`]; its exit code.
fn wait_exit(child: &mut Child, what: &str, scratch: &Scratch, log: &str) -> i32 {
    let mut status = None;
    wait_until(what, EVENT, || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    let status = status.unwrap();
    status.code().unwrap_or_else(|| {
        panic!(
            "{what}: {status}\n{}",
            scratch.read(log).unwrap_or_default()
        )
    })
}

fn sigterm(child: &Child) {
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
}

fn seq_serve(url: &str, scratch: &Scratch) {
    let port = free_port();
    let notify_path = scratch.path("notify.sock");
    let notify = UnixDatagram::bind(&notify_path).unwrap();
    notify.set_read_timeout(Some(EVENT)).unwrap();
    let env_file = format!("YARAUS_REDIS={url}\nYARAUS_ARGS=--listen 127.0.0.1:{port}\n");
    let unit = "yaraus-seq-serve@.service";
    assert_eq!(setting(&unit_settings(unit), "Type"), ["notify"]);
    let notify_socket = notify_path.to_str().unwrap().to_string();
    let mut child = start_unit(
        unit,
        &env_file,
        scratch,
        &[("NOTIFY_SOCKET", notify_socket)],
        "seq.log",
    );
    let mut buf = [0u8; 256];
    let n = notify.recv(&mut buf).unwrap_or_else(|e| {
        panic!(
            "no READY=1 from seq serve: {e}\n{}",
            scratch.read("seq.log").unwrap_or_default()
        )
    });
    assert_eq!(String::from_utf8_lossy(&buf[..n]), "READY=1\n");

    let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    conn.set_read_timeout(Some(EVENT)).unwrap();
    conn.write_all(b"*2\r\n$4\r\nINCR\r\n$6\r\norders\r\n")
        .unwrap();
    let mut reply = [0u8; 64];
    let n = conn.read(&mut reply).unwrap();
    assert_eq!(&reply[..n], b":1\r\n", "INCR orders through seq serve");
    drop(conn);

    sigterm(&child);
    let n = notify.recv(&mut buf).unwrap();
    assert_eq!(String::from_utf8_lossy(&buf[..n]), "STOPPING=1\n");
    let code = wait_exit(&mut child, "seq serve to exit", scratch, "seq.log");
    assert_eq!(code, 0, "{}", scratch.read("seq.log").unwrap_or_default());
}

fn hilo_agent(url: &str, scratch: &Scratch, server: &RedisServer) {
    // YARAUS_EVERY is left to the unit's Environment= default.
    let env_file =
        format!("YARAUS_REDIS={url}\nYARAUS_ARGS=orders --window-size 1000 --min-open 2\n");
    let unit = "yaraus-hilo-agent@.service";
    let mut child = start_unit(unit, &env_file, scratch, &[], "hilo.log");
    wait_until("the hilo agent to open windows", EVENT, || {
        let keys: Vec<String> = server.query(&["KEYS", "*hilo*"]);
        keys.len() >= 2 || child.try_wait().unwrap().is_some()
    });
    assert!(
        child.try_wait().unwrap().is_none(),
        "the agent exited: {}",
        scratch.read("hilo.log").unwrap_or_default()
    );
    let status = ok(command("/usr/bin/yaraus")
        .args(["hilo", "status", "orders", "--redis", url])
        .env("YARAUS_REDIS_PASSWORD", PASSWORD));
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(
        status["shards"][0]["open_windows"], 2,
        "the agent's windows: {status}"
    );
    sigterm(&child);
    let code = wait_exit(&mut child, "the hilo agent to exit", scratch, "hilo.log");
    assert_eq!(code, 0, "{}", scratch.read("hilo.log").unwrap_or_default());
}

fn run_worker(url: &str, scratch: &Scratch) {
    let worker = scratch.script(
        "worker.sh",
        "#!/bin/sh\nenv > \"$2.env\"\necho \"$1\" > \"$2.tmp\" && mv \"$2.tmp\" \"$2\"\nexec sleep 60\n",
    );
    fs::set_permissions(&worker, fs::Permissions::from_mode(0o755)).unwrap();
    let env_file = format!(
        "YARAUS_REDIS={url}?ns=pkg\n\
         YARAUS_ARGS=--min 1 --max 3 --interval 100ms --kill-after 300ms\n\
         YARAUS_COMMAND={worker} <> {}\n",
        scratch.arg("id")
    );
    let unit = "yaraus-run@.service";
    let settings = unit_settings(unit);
    assert_eq!(setting(&settings, "KillMode"), ["mixed"]);
    assert_eq!(setting(&settings, "SuccessExitStatus"), ["143"]);
    let mut child = start_unit(unit, &env_file, scratch, &[], "run.log");
    wait_until("the worker to start with its id", EVENT, || {
        scratch.exists("id") || child.try_wait().unwrap().is_some()
    });
    let id = scratch.read("id").unwrap_or_else(|| {
        panic!(
            "the worker never started: {}",
            scratch.read("run.log").unwrap_or_default()
        )
    });
    let id: u32 = id.trim().parse().expect("the id in place of <>");
    assert!((1..=3).contains(&id), "id {id}");
    assert_eq!(using_ids(url), 1, "the lease in Redis");
    let env = scratch.read("id.env").unwrap();
    assert!(
        !env.contains(PASSWORD) && !env.contains("YARAUS_REDIS="),
        "the worker's environment holds yaraus's credentials:\n{env}"
    );

    // KillMode=mixed: systemd's SIGTERM to yaraus alone.
    sigterm(&child);
    let code = wait_exit(&mut child, "yaraus run to exit", scratch, "run.log");
    assert_eq!(code, 143, "{}", scratch.read("run.log").unwrap_or_default());
    assert_eq!(using_ids(url), 0, "the id was not released");
}

/// `using_ids` of the pool `pkg`, as the installed yaraus's `stats` says.
fn using_ids(url: &str) -> u64 {
    let out = ok(command("/usr/bin/yaraus")
        .args(["stats", "--redis", &format!("{url}?ns=pkg")])
        .env("YARAUS_REDIS_PASSWORD", PASSWORD));
    let stats: serde_json::Value = serde_json::from_str(&out).unwrap();
    stats["using_ids"]
        .as_u64()
        .unwrap_or_else(|| panic!("no using_ids in {out}"))
}
