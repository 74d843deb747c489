//! The whole content of a [`RedisServer`] as text, for "Redis unchanged"
//! assertions: every key of every database with its type, its content in a
//! deterministic order, and its expiry.

use std::collections::BTreeMap;

use super::server::RedisServer;

impl RedisServer {
    /// Every key with its type, content and expiry, for "Redis unchanged"
    /// assertions (`assert_eq!(before, after)`). Keys of databases other than
    /// 0 are listed as `[dbN] key`. Values look like
    /// `zset ["A1"=1700000000, "B10"=0] expire=none`: hashes and sets are
    /// sorted, zsets in rank order with their scores, lists in order, and
    /// the expiry is absolute (`PEXPIRETIME`), so it does not drift.
    pub fn snapshot(&self) -> BTreeMap<String, String> {
        let mut conn = self.conn();
        let keyspace = self.info("keyspace");
        let mut dbs: Vec<u32> = keyspace
            .lines()
            .filter_map(|l| l.strip_prefix("db")?.split(':').next()?.parse().ok())
            .collect();
        dbs.sort_unstable();
        let mut out = BTreeMap::new();
        for db in dbs {
            redis::cmd("SELECT")
                .arg(db)
                .exec(&mut conn)
                .expect("SELECT");
            let mut cursor: u64 = 0;
            loop {
                let (next, keys): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("COUNT")
                    .arg(1000)
                    .query(&mut conn)
                    .expect("SCAN");
                for key in keys {
                    let name = if db == 0 {
                        show_plain(&key)
                    } else {
                        format!("[db{db}] {}", show_plain(&key))
                    };
                    if let Some(dump) = dump_key(&mut conn, &key) {
                        out.insert(name, dump);
                    }
                }
                if next == 0 {
                    break;
                }
                cursor = next;
            }
        }
        out
    }
}

/// The content of one key, or None if it vanished meanwhile.
fn dump_key(conn: &mut redis::Connection, key: &[u8]) -> Option<String> {
    let kind: String = redis::cmd("TYPE").arg(key).query(conn).expect("TYPE");
    let q = |conn: &mut redis::Connection, cmd: &mut redis::Cmd| -> Vec<Vec<u8>> {
        cmd.query(conn)
            .unwrap_or_else(|e| panic!("dumping {}: {e}", show_plain(key)))
    };
    let content = match kind.as_str() {
        "none" => return None,
        "string" => {
            let v: Option<Vec<u8>> = redis::cmd("GET").arg(key).query(conn).expect("GET");
            show(&v?)
        }
        "hash" => {
            let flat = q(conn, redis::cmd("HGETALL").arg(key));
            let mut pairs: Vec<String> = flat
                .chunks(2)
                .map(|p| format!("{}={}", show(&p[0]), show(&p[1])))
                .collect();
            pairs.sort();
            format!("{{{}}}", pairs.join(", "))
        }
        "zset" => {
            let flat = q(
                conn,
                redis::cmd("ZRANGE")
                    .arg(key)
                    .arg(0)
                    .arg(-1)
                    .arg("WITHSCORES"),
            );
            let pairs: Vec<String> = flat
                .chunks(2)
                .map(|p| format!("{}={}", show(&p[0]), String::from_utf8_lossy(&p[1])))
                .collect();
            format!("[{}]", pairs.join(", "))
        }
        "set" => {
            let mut members: Vec<String> = q(conn, redis::cmd("SMEMBERS").arg(key))
                .iter()
                .map(|m| show(m))
                .collect();
            members.sort();
            format!("{{{}}}", members.join(", "))
        }
        "list" => {
            let items: Vec<String> = q(conn, redis::cmd("LRANGE").arg(key).arg(0).arg(-1))
                .iter()
                .map(|m| show(m))
                .collect();
            format!("[{}]", items.join(", "))
        }
        _ => {
            // Streams and module types: the raw reply of a dump is still a
            // faithful, deterministic picture.
            let v: redis::Value = redis::cmd("DUMP").arg(key).query(conn).expect("DUMP");
            format!("{v:?}")
        }
    };
    let expire = match redis::cmd("PEXPIRETIME").arg(key).query::<i64>(conn) {
        Ok(-1) => "none".to_string(),
        Ok(-2) => return None,
        Ok(at) => format!("@{at}ms"),
        // Redis < 7 has no PEXPIRETIME: only tell volatile from persistent.
        Err(_) => match redis::cmd("PTTL").arg(key).query::<i64>(conn) {
            Ok(-1) => "none".to_string(),
            Ok(-2) => return None,
            _ => "volatile".to_string(),
        },
    };
    Some(format!("{kind} {content} expire={expire}"))
}

/// Quoted, escaped rendering of a binary-safe Redis string.
fn show(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => format!("{s:?}"),
        Err(_) => format!("b\"{}\"", bytes.escape_ascii()),
    }
}

/// A key as plain text (escaped only when it is not UTF-8).
fn show_plain(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => format!("b\"{}\"", bytes.escape_ascii()),
    }
}
