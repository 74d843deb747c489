//! A stderr nobody reads: a full pipe must not keep the child alive past
//! the expiry (yaraus's warnings must never block its deadline).

use super::*;

/// Sets or clears O_NONBLOCK on an open file description.
fn set_nonblocking(fd: &OwnedFd, on: bool) {
    let flags = OFlag::from_bits_truncate(fcntl(fd.as_fd(), FcntlArg::F_GETFL).expect("F_GETFL"));
    let flags = if on {
        flags | OFlag::O_NONBLOCK
    } else {
        flags - OFlag::O_NONBLOCK
    };
    fcntl(fd.as_fd(), FcntlArg::F_SETFL(flags)).expect("F_SETFL");
}

/// Writes to the pipe until it is full (non-blocking for the time it takes).
fn fill_pipe(fd: &OwnedFd) {
    set_nonblocking(fd, true);
    let mut file = File::from(fd.try_clone().expect("dup the write end"));
    for chunk in [4096, 1] {
        let buf = vec![b'x'; chunk];
        loop {
            match file.write(&buf) {
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => panic!("filling the pipe: {e}"),
            }
        }
    }
    set_nonblocking(fd, false);
}

/// Reads the pipe to its end in a thread; what it read is in the result.
fn drain_pipe(read: OwnedFd) -> Arc<Mutex<Vec<u8>>> {
    let drained = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&drained);
    thread::spawn(move || {
        let mut file = File::from(read);
        let mut buf = [0u8; 8192];
        while let Ok(n) = file.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    drained
}

#[test]
fn a_blocked_stderr_does_not_keep_the_child_alive_past_the_expiry() {
    let (server, scratch) = fresh_pool(1, 1);
    let child = scratch.script("child.sh", HEARTBEAT);
    let (read_end, write_end) = nix::unistd::pipe2(OFlag::O_CLOEXEC).expect("pipe");
    // The same open file description as yaraus's stderr: its O_NONBLOCK is
    // yaraus's too.
    let ours = write_end.try_clone().expect("dup the write end");
    let mut cmd = yaraus_in(&scratch, &["--quiet", "run", "--redis", &server.url_ns(NS)]);
    cmd.args(timings("2s", "300ms")).args(["--", "sh", &child]);
    let mut run = Run::spawn_with_stderr(cmd, &scratch, Stdio::from(write_end));
    let pid = read_pid(&scratch, "pid");
    let pgid = pgid_of(pid);
    wait_beating(&scratch);
    wait_renewal(&server);

    // Nobody reads the pipe, and it is full: any warning blocks.
    fill_pipe(&ours);
    pause_writes(&server);
    let expiry = score(&server, 1).expect("id 1 in the pool");
    server.sigstop();

    wait_child_and_group_dead(
        pid,
        pgid,
        "the child to be killed while yaraus's stderr is full and Redis is frozen",
    );
    assert_beats_end_before(&scratch, expiry, "stderr full, Redis frozen");

    server.sigcont();
    unpause(&server);
    // yaraus exits too, with the pipe still full and unread: its last
    // lines are dropped (bounded wait), never waited for.
    drop(ours);
    let code = run.wait();
    let drained = drain_pipe(read_end);
    assert_eq!(
        code,
        EXIT_LOST,
        "stderr: {}",
        String::from_utf8_lossy(&drained.lock().unwrap()).trim_start_matches('x')
    );
}
