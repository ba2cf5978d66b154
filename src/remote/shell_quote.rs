//! Words quoted for the remote host's POSIX shell.

/// `word` quoted for the remote POSIX shell (`'it'\''s'`); words that need
/// no quotes stay as they are. A NUL byte, which no shell word can hold,
/// is dropped.
pub fn quote(word: &str) -> String {
    let clean: String = word.chars().filter(|&c| c != '\0').collect();
    shlex::try_quote(&clean)
        .map(|q| q.into_owned())
        .unwrap_or_default()
}

/// Words quoted and joined into one remote command line.
pub fn command_line<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_for_a_posix_shell() {
        assert_eq!(quote("cpu.primes"), "cpu.primes");
        // What the shell reads back is the word itself.
        for word in ["a b", "it's", "", "$HOME `x` \\ \"q\"", "dir=\"/mnt/a,b\""] {
            assert_eq!(shlex::split(&quote(word)).unwrap(), vec![word.to_string()]);
        }
        let line = command_line(&["run", "-p", "label=a b"]);
        assert_eq!(shlex::split(&line).unwrap(), ["run", "-p", "label=a b"]);
    }
}
