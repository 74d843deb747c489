//! Every process descended from one, including those that left its process
//! group, and signalling them all.
//!
//! `killpg` reaches only the command's group: a descendant that called
//! `setsid` or `setpgid` (a daemonizing script, `setsid -f`, a shell job in
//! an interactive subshell) would escape it and go on using what is about
//! to be released. The process that started the command is a child
//! subreaper, so such a process stays its descendant even when the processes
//! between them die; finding them is a walk of `/proc`.
//!
//! The kernel may lack `/proc/PID/task/TID/children` (CONFIG_PROC_CHILDREN
//! is not always built), so the walk reads every `/proc/PID/stat` once and
//! links parents to children itself.

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use std::collections::HashMap;

/// A descendant, as `/proc/PID/stat` showed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Process {
    pub pid: Pid,
    pub group: Pid,
    /// Not yet a zombie.
    pub alive: bool,
}

/// `(parent, group, state)` of `pid`.
fn stat(pid: i32) -> Option<(i32, i32, char)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after
    // the last ')'.
    let mut fields = text[text.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    Some((parent, group, state))
}

/// Every descendant of `root` (not `root` itself), zombies included.
pub fn descendants(root: Pid) -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut children: HashMap<i32, Vec<Process>> = HashMap::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if let Some((parent, group, state)) = stat(pid) {
            children.entry(parent).or_default().push(Process {
                pid: Pid::from_raw(pid),
                group: Pid::from_raw(group),
                alive: state != 'Z' && state != 'X',
            });
        }
    }
    let mut found = Vec::new();
    let mut next = vec![root.as_raw()];
    while let Some(parent) = next.pop() {
        for child in children.remove(&parent).unwrap_or_default() {
            next.push(child.pid.as_raw());
            found.push(child);
        }
    }
    found
}

/// Sends `sig` once to every live process of `processes`: to `group` as a
/// whole when any of them is in it (one signal per member, as a terminal
/// sends it), and one by one to the others. Returns how many were live.
pub fn signal(processes: &[Process], group: Option<Pid>, sig: Signal) -> usize {
    let live: Vec<&Process> = processes.iter().filter(|p| p.alive).collect();
    let in_group = |p: &Process| Some(p.group) == group;
    if let Some(group) = group {
        // Only while a live member is seen: an empty group's number may
        // belong to somebody else's new group by now.
        if live.iter().any(|p| in_group(p)) {
            let _ = killpg(group, sig);
        }
    }
    for p in live.iter().filter(|p| !in_group(p)) {
        let _ = kill(p.pid, sig);
    }
    live.len()
}

/// SIGKILLs every descendant of this process and reaps them until none is
/// left. For yaraus when its watchdog is gone: yaraus is a child subreaper
/// too, so what the command left behind is handed to it.
pub async fn kill_own_descendants() {
    use nix::sys::wait::{WaitPidFlag, waitpid};
    let me = nix::unistd::getpid();
    loop {
        signal(&descendants(me), None, Signal::SIGKILL);
        loop {
            match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                Err(nix::Error::ECHILD) => return,
                Ok(nix::sys::wait::WaitStatus::StillAlive) => break,
                _ => {}
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    #[test]
    fn descendants_include_grandchildren_that_left_the_group() {
        // sh → (setsid sleep), sh → sleep: both sleeps are our descendants
        // while sh waits for them.
        let mut sh = Command::new("sh")
            .args(["-c", "setsid sleep 30 & sleep 30 & echo ready; wait"])
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(sh.stdout.as_mut().unwrap()),
            &mut line,
        )
        .unwrap();
        let me = nix::unistd::getpid();
        let sh_pid = Pid::from_raw(sh.id() as i32);
        // Until `setsid` has run, both sleeps-to-be are in sh's group: wait
        // (boundedly) for one inside it and one outside.
        let settled = |below: &[Process]| {
            let live: Vec<_> = below.iter().filter(|p| p.alive).collect();
            live.iter().any(|p| p.group == sh_pid) && live.iter().any(|p| p.group != sh_pid)
        };
        let mut below = Vec::new();
        for _ in 0..500 {
            below = descendants(sh_pid);
            if settled(&below) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let mine = descendants(me);
        assert!(mine.iter().any(|p| p.pid == sh_pid));
        let sleeps: Vec<_> = below.iter().filter(|p| p.alive).collect();
        assert!(sleeps.len() >= 2, "{below:?}");
        assert!(sleeps.iter().any(|p| p.group == sh_pid), "{below:?}");
        assert!(
            sleeps.iter().any(|p| p.group != sh_pid),
            "none left the group: {below:?}"
        );
        assert_eq!(signal(&below, None, Signal::SIGKILL), sleeps.len());
        sh.wait().unwrap();
    }
}
