//! What a server that is not Redis answered, for the one line that says so.
//!
//! redis-rs reports such a server as a parse error of the first reply,
//! which tells the user nothing about what is listening there. A second
//! connection that sends one line and reads the first line back names it:
//! an HTTP server's status line, an SSH banner.

use super::target::Endpoint;
use super::target::Target;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// At most this much of the answer is shown: enough for a status line or a
/// banner, not a page.
const SHOWN: usize = 60;

/// `host:port` (or the socket's path) of a one-server target, the URL of
/// any other: what "not a Redis server at …" names.
pub(super) fn address(target: &Target) -> String {
    match target.endpoint() {
        Endpoint::Server(info) => match info.addr() {
            redis::ConnectionAddr::Tcp(host, port)
            | redis::ConnectionAddr::TcpTls { host, port, .. } => format!("{host}:{port}"),
            redis::ConnectionAddr::Unix(path) => path.display().to_string(),
            _ => target.display().to_string(),
        },
        _ => target.display().to_string(),
    }
}

/// The first line the server at `target` answers to a probe, cut to
/// [`SHOWN`] printable characters; `None` when it answers nothing
/// printable within `within`, or is not one plain server.
pub(super) async fn first_line(target: &Target, within: Duration) -> Option<String> {
    let Endpoint::Server(info) = target.endpoint() else {
        return None;
    };
    let read = async {
        match info.addr() {
            redis::ConnectionAddr::Tcp(host, port) => {
                exchange(
                    tokio::net::TcpStream::connect((host.as_str(), *port))
                        .await
                        .ok()?,
                )
                .await
            }
            redis::ConnectionAddr::Unix(path) => {
                exchange(tokio::net::UnixStream::connect(path).await.ok()?).await
            }
            _ => None,
        }
    };
    let bytes = tokio::time::timeout(within, read).await.ok()??;
    let line = String::from_utf8_lossy(&bytes);
    let line: String = line
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())?
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    Some(match line.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    })
}

/// Sends a line any RESP server takes as an inline command, and that an
/// HTTP server answers with its status line; returns what came back.
async fn exchange(mut stream: impl AsyncRead + AsyncWrite + Unpin) -> Option<Vec<u8>> {
    stream.write_all(b"PING / HTTP/1.0\r\n\r\n").await.ok()?;
    let mut buf = vec![0u8; 256];
    let n = stream.read(&mut buf).await.ok()?;
    buf.truncate(n);
    Some(buf)
}
