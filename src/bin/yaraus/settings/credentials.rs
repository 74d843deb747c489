//! Where the Redis password comes from when it is not in the URL, and which
//! variables must never reach a supervised command.
//!
//! A password in `--redis redis://:secret@host` is in the process list for
//! every local user (`ps`, `/proc/PID/cmdline` are world-readable), so it has
//! four other ways in, tried in this order:
//!
//! 1. `--redis-password-file PATH`: the file's first line. A file that group
//!    or others may read (or write) is refused, as ssh refuses such a key:
//!    the secret would only have moved from one public place to another;
//! 2. the systemd credential `redis-password`: the first line of
//!    `$CREDENTIALS_DIRECTORY/redis-password`, which a unit's
//!    `LoadCredential=redis-password:/etc/yaraus/NAME.password` puts there
//!    (the units of packaging/systemd do). Its mode is not checked: systemd
//!    makes the directory readable by the service alone, and gives the file
//!    to the service's user through an ACL, which shows as a group bit;
//! 3. `YARAUS_REDIS_PASSWORD`;
//! 4. `REDISCLI_AUTH`, redis-cli's variable, so that one secret serves both.
//!
//! The process environment is readable only by the same user. A password in
//! the URL wins over the credential and the variables (it is the more
//! specific), but together
//! with `--redis-password-file` it is a usage error: two explicit passwords
//! are a mistake, and guessing which one is meant would hide it. The ACL
//! user name is no secret: it comes from the URL or `--redis-user`.
//!
//! [`SECRET_VARS`] lists every variable that carries a credential (or the way
//! to one); the supervisor removes them from a command's environment, so that
//! a program that logs its environment, or a crash dump, does not hand the
//! pool to whoever reads it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use yaraus::error::{Error, Result};
use yaraus::store::Password;

/// The variable that holds the password (step 3).
pub const PASSWORD_VAR: &str = "YARAUS_REDIS_PASSWORD";
/// redis-cli's variable for the password (step 4).
pub const REDISCLI_AUTH: &str = "REDISCLI_AUTH";
/// The variable systemd sets to a service's credentials directory (step 2).
pub const CREDENTIALS_DIRECTORY: &str = "CREDENTIALS_DIRECTORY";
/// The name of the password's credential in that directory.
pub const PASSWORD_CREDENTIAL: &str = "redis-password";

/// The variables the password is read from, in the order tried, with what
/// the man pages' ENVIRONMENT section says of them (the other variables
/// are clap's, and listed from its definitions).
pub const PASSWORD_VARS: &[(&str, &str)] = &[
    (
        PASSWORD_VAR,
        "The Redis password, where neither the --redis URL nor --redis-password-file gives one \
         (kept out of the process list, which every local user can read).",
    ),
    (
        REDISCLI_AUTH,
        "redis-cli's variable for the password, read where YARAUS_REDIS_PASSWORD is unset or \
         empty, so that one secret serves both.",
    ),
];

/// Variables removed from the environment of every command yaraus runs
/// (unless named by `--pass-env`): the URL (which may carry a password), the
/// password, the path to it, and `yaraus seq serve`'s client password.
pub const SECRET_VARS: &[&str] = &[
    "YARAUS_REDIS",
    PASSWORD_VAR,
    "YARAUS_REDIS_PASSWORD_FILE",
    REDISCLI_AUTH,
    "YARAUS_SEQ_PASSWORD",
];

/// The password of `--redis-password-file`, else of the systemd credential,
/// else of the variables (read through `var`, so that tests need not touch
/// the process environment); `None` when there is none.
pub fn find_password(
    file: Option<&Path>,
    var: impl Fn(&str) -> Option<String>,
) -> Result<Option<Password>> {
    if let Some(path) = file {
        let secret = read_password_file(path)?;
        let source = format!("--redis-password-file {}", path.display());
        return Ok(Some(Password::new(secret, source, true)));
    }
    if let Some(dir) = var(CREDENTIALS_DIRECTORY).filter(|d| !d.is_empty()) {
        let path = Path::new(&dir).join(PASSWORD_CREDENTIAL);
        if path.exists() {
            let source = format!("the systemd credential {}", path.display());
            let secret = first_line(&path, &source)?;
            return Ok(Some(Password::new(secret, source, false)));
        }
    }
    for (name, _) in PASSWORD_VARS {
        if let Some(secret) = var(name).filter(|s| !s.is_empty()) {
            return Ok(Some(Password::new(secret, name.to_string(), false)));
        }
    }
    Ok(None)
}

/// Whether `secret` is in this process's arguments, which every local user
/// can read (`ps`, `/proc/PID/cmdline`).
pub fn in_argv(secret: &str) -> bool {
    std::env::args_os()
        .skip(1)
        .any(|a| a.to_string_lossy().contains(secret))
}

/// Warns (unless `--quiet`) that `what` is on the command line, where every
/// local user can read it, and says what to use `instead`.
pub fn warn_on_command_line(what: &str, instead: &str) {
    if !crate::logger::is_quiet() {
        log::warn!(
            "WARNING: {what} is on the command line, where every local user can read it (ps, \
             /proc/PID/cmdline); {instead} (--quiet hides this)"
        );
    }
}

/// The first line of a password file that only its owner may read.
pub fn read_password_file(path: &Path) -> Result<String> {
    let flag = "--redis-password-file";
    let shown = path.display();
    let meta = std::fs::metadata(path)
        .map_err(|e| Error::Usage(format!("{flag} {shown}: cannot read it: {e}")))?;
    if !meta.is_file() {
        return Err(Error::Usage(format!("{flag} {shown}: not a regular file")));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(Error::Usage(format!(
            "{flag} {shown}: group or others may read or write it (mode {mode:04o}), so the \
             password is not secret; run `chmod 600 {shown}`"
        )));
    }
    first_line(path, &format!("{flag} {shown}"))
}

/// The first line of the file at `path` (without its line end), which must
/// not be empty; `what` names it in errors.
fn first_line(path: &Path, what: &str) -> Result<String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Usage(format!("{what}: cannot read it: {e}")))?;
    let line = text.lines().next().unwrap_or("");
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.is_empty() {
        return Err(Error::Usage(format!(
            "{what}: the first line is empty; write the password on it"
        )));
    }
    Ok(line.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file(mode: u32, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pw");
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(text.as_bytes()).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        (dir, path)
    }

    #[test]
    fn reads_the_first_line_of_a_private_file() {
        let (_d, path) = file(0o600, "s3cret\r\nsecond line\n");
        assert_eq!(read_password_file(&path).unwrap(), "s3cret");
        let (_d, path) = file(0o400, "only");
        assert_eq!(read_password_file(&path).unwrap(), "only");
    }

    #[test]
    fn refuses_files_others_may_read_and_never_shows_the_password() {
        for mode in [0o644, 0o640, 0o604, 0o620, 0o602] {
            let (_d, path) = file(mode, "s3cret\n");
            let e = read_password_file(&path).unwrap_err();
            assert!(matches!(e, Error::Usage(_)), "{mode:o}: {e}");
            let text = e.to_string();
            assert!(
                text.contains("chmod 600") && !text.contains("s3cret"),
                "{text}"
            );
        }
        let (_d, path) = file(0o600, "\nsecond");
        assert!(
            read_password_file(&path)
                .unwrap_err()
                .to_string()
                .contains("empty")
        );
        let missing = read_password_file(Path::new("/nonexistent/pw")).unwrap_err();
        assert!(matches!(missing, Error::Usage(_)));
    }

    #[test]
    fn the_file_comes_before_the_variables_in_their_order() {
        let vars = |name: &str| match name {
            PASSWORD_VAR => Some("from-var".to_string()),
            REDISCLI_AUTH => Some("from-cli".to_string()),
            _ => None,
        };
        let p = find_password(None, vars).unwrap().unwrap();
        assert_eq!((p.secret(), p.source()), ("from-var", PASSWORD_VAR));
        assert!(!p.is_explicit());
        let only_cli = |name: &str| (name == REDISCLI_AUTH).then(|| "from-cli".to_string());
        let p = find_password(None, only_cli).unwrap().unwrap();
        assert_eq!(p.secret(), "from-cli");
        let (_d, path) = file(0o600, "from-file\n");
        let p = find_password(Some(&path), vars).unwrap().unwrap();
        assert_eq!(p.secret(), "from-file");
        assert!(p.is_explicit());
        assert!(!format!("{p:?}").contains("from-file"));
        assert!(find_password(None, |_| None).unwrap().is_none());
    }

    /// systemd's `LoadCredential=redis-password:...` puts the file in
    /// `$CREDENTIALS_DIRECTORY`, readable through an ACL (a group bit in
    /// the mode), so its mode is not held against it.
    #[test]
    fn the_systemd_credential_comes_after_the_file_and_before_the_variables() {
        let dir = tempfile::tempdir().unwrap();
        let cred = dir.path().join(PASSWORD_CREDENTIAL);
        std::fs::write(&cred, "from-credential\n").unwrap();
        std::fs::set_permissions(&cred, std::fs::Permissions::from_mode(0o440)).unwrap();
        let cred_dir = dir.path().to_str().unwrap().to_string();
        let vars = |name: &str| match name {
            CREDENTIALS_DIRECTORY => Some(cred_dir.clone()),
            PASSWORD_VAR => Some("from-var".to_string()),
            _ => None,
        };
        let p = find_password(None, vars).unwrap().unwrap();
        assert_eq!(p.secret(), "from-credential");
        assert!(p.source().contains("systemd credential"), "{}", p.source());
        assert!(
            !p.is_explicit(),
            "a URL password wins, as over the variables"
        );
        let (_d, path) = file(0o600, "from-file\n");
        assert_eq!(
            find_password(Some(&path), vars).unwrap().unwrap().secret(),
            "from-file"
        );
        // A credentials directory without the password: the variables.
        let empty = tempfile::tempdir().unwrap();
        let empty_dir = empty.path().to_str().unwrap().to_string();
        let other = |name: &str| match name {
            CREDENTIALS_DIRECTORY => Some(empty_dir.clone()),
            PASSWORD_VAR => Some("from-var".to_string()),
            _ => None,
        };
        assert_eq!(
            find_password(None, other).unwrap().unwrap().secret(),
            "from-var"
        );
        // An empty credential is a mistake, named, not a silent empty password.
        std::fs::set_permissions(&cred, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(&cred, "\n").unwrap();
        let e = find_password(None, vars).unwrap_err().to_string();
        assert!(
            e.contains("systemd credential") && e.contains("empty"),
            "{e}"
        );
    }
}
