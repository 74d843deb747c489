//! A worker id, and how the pool names it: a letter for the digit count,
//! then the digits, so that the sorted set orders names like numbers and
//! equal scores give the smallest id.

/// A worker id, as the child sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WorkerId(pub u64);

impl WorkerId {
    /// The pool's member name: a letter for the digit count, then the digits
    /// (`A7`, `B42`, `C100`), so that names sort like numbers.
    pub fn encode(self) -> String {
        let digits = self.0.to_string();
        let letter = (b'A' + (digits.len() as u8 - 1)) as char;
        format!("{letter}{digits}")
    }

    /// Reads a member name; `None` unless it is exactly what [`encode`](Self::encode) makes.
    pub fn decode(member: &str) -> Option<WorkerId> {
        let bytes = member.as_bytes();
        let (&letter, digits) = bytes.split_first()?;
        if !letter.is_ascii_uppercase() || digits.len() != (letter - b'A' + 1) as usize {
            return None;
        }
        if !digits.iter().all(u8::is_ascii_digit) || (digits.len() > 1 && digits[0] == b'0') {
            return None;
        }
        std::str::from_utf8(digits).ok()?.parse().ok().map(WorkerId)
    }
}

impl std::fmt::Display for WorkerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_sorts_like_numbers() {
        let mut names: Vec<String> = [1u64, 9, 10, 11, 99, 100, 1023, 4194303, 0]
            .iter()
            .map(|&n| WorkerId(n).encode())
            .collect();
        names.sort();
        let back: Vec<u64> = names
            .iter()
            .map(|m| WorkerId::decode(m).unwrap().0)
            .collect();
        assert_eq!(back, vec![0, 1, 9, 10, 11, 99, 100, 1023, 4194303]);
        assert_eq!(WorkerId(7).encode(), "A7");
        assert_eq!(WorkerId(42).encode(), "B42");
        assert_eq!(WorkerId(u64::MAX).encode(), format!("T{}", u64::MAX));
    }

    #[test]
    fn decoding_rejects_what_encoding_never_makes() {
        for bad in ["", "A", "B1", "A12", "a1", "B01", "Ax", "1", "C1000"] {
            assert_eq!(WorkerId::decode(bad), None, "{bad}");
        }
    }
}
