//! TLS: a redis-server that listens only with TLS and requires client
//! certificates, with a throwaway CA, server and client certificate made by
//! `openssl` in the test. The harness itself talks to the server over its
//! unix socket.

use super::*;
use common::scratch::Scratch;
use common::{RedisServer, ServerOptions, command, free_port};

/// Runs `openssl ARGS` in `dir`, panicking with its output on failure.
fn openssl(dir: &Scratch, args: &[&str]) {
    let out = command("openssl")
        .args(args)
        .current_dir(dir.dir())
        .output()
        .expect("run openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// ca.pem, server.pem/server.key (for 127.0.0.1), client.pem/client.key.
fn certificates(dir: &Scratch) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509", "-days", "1", "-subj", "/CN=yaraus test CA"];
    ca.extend(ec);
    ca.extend(["-keyout", "ca.key", "-out", "ca.pem"]);
    openssl(dir, &ca);
    for (name, ext) in [
        (
            "server",
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
        ),
        ("client", "extendedKeyUsage=clientAuth\n"),
    ] {
        let mut req = vec!["req", "-subj"];
        let subj = format!("/CN=yaraus test {name}");
        let (key, csr, pem, extfile) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.pem"),
            format!("{name}.ext"),
        );
        std::fs::write(dir.path(&extfile), ext).unwrap();
        req.push(&subj);
        req.extend(ec);
        req.extend(["-keyout", &key, "-out", &csr]);
        openssl(dir, &req);
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-days",
                "1",
                "-in",
                &csr,
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-extfile",
                &extfile,
                "-out",
                &pem,
            ],
        );
    }
}

#[test]
fn rediss_with_a_private_ca_and_a_client_certificate() {
    let dir = Scratch::new();
    certificates(&dir);
    let port = free_port();
    let server = RedisServer::start_with(ServerOptions {
        extra_args: vec![
            "--tls-port".into(),
            port.to_string(),
            "--tls-cert-file".into(),
            dir.arg("server.pem"),
            "--tls-key-file".into(),
            dir.arg("server.key"),
            "--tls-ca-cert-file".into(),
            dir.arg("ca.pem"),
            "--tls-auth-clients".into(),
            "yes".into(),
        ],
        ..Default::default()
    });
    let url = format!("rediss://127.0.0.1:{port}/0?ns=tls");
    let (ca, cert, key) = (
        dir.arg("ca.pem"),
        dir.arg("client.pem"),
        dir.arg("client.key"),
    );
    let mtls = ["--tls-ca", &ca, "--tls-cert", &cert, "--tls-key", &key];

    let with = |more: &[&str]| {
        let mut args = vec!["init", "--redis", &url, "--min", "1", "--max", "2"];
        args.extend(more);
        run_yaraus(&args, &[], LIMIT)
    };
    // The private CA is not trusted without --tls-ca: refused, nothing written.
    let out = with(&["--tls-cert", &cert, "--tls-key", &key]);
    assert_eq!(out.code, Some(69), "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    // The server requires a client certificate.
    let out = with(&["--tls-ca", &ca]);
    assert_eq!(out.code, Some(69), "{}", out.stderr);
    assert!(server.snapshot().is_empty());
    // --tls-* with a plain URL, and a missing file: usage errors.
    let plain = format!("redis://127.0.0.1:{port}/0");
    let out = run_yaraus(&["stats", "--redis", &plain, "--tls-ca", &ca], &[], LIMIT);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("rediss://"), "{}", out.stderr);
    let out = with(&["--tls-ca", "/nonexistent/ca.pem"]);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("--tls-ca /nonexistent/ca.pem"),
        "{}",
        out.stderr
    );
    assert!(server.snapshot().is_empty());

    // With both: init, run, stats.
    let out = with(&mtls);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let mut args = vec!["run", "--redis", &url];
    args.extend(mtls);
    args.extend(["--", "sh", "-c", "echo id=$YARAUS_WORKER_ID"]);
    let out = ok(&args);
    assert!(out.stdout.contains("id=1"), "{}", out.stdout);
    // --tls-insecure accepts the unknown CA (the client certificate is still needed).
    let out = ok(&[
        "stats",
        "--redis",
        &url,
        "--tls-insecure",
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
    ]);
    assert!(
        out.stdout.contains("client_get_id_success"),
        "{}",
        out.stdout
    );
}
