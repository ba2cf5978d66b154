//! Keeping passwords out of what sledge prints and stores.
//!
//! Parameters and the command line are shown in tables and stored with
//! every run; a database URL among them may carry a password. Everything
//! shown or stored goes through [`redact_url`] first, while the workload
//! still gets the real value.

/// `url` with the password (in the user part or a `password=` query
/// parameter) replaced by `***`. Works on malformed URLs too: everything
/// between the first `:` after the user name and the last `@` goes.
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let (scheme, rest) = url.split_at(scheme_end);
    let mut out = scheme.to_string();
    let rest = match rest.rfind('@') {
        Some(at) => {
            let user = &rest[..at];
            match user.find(':') {
                Some(colon) => out.push_str(&format!("{}:***", &user[..colon])),
                None => out.push_str(user),
            }
            &rest[at..]
        }
        None => rest,
    };
    match rest.find('?') {
        Some(q) => {
            out.push_str(&rest[..=q]);
            let params: Vec<String> = rest[q + 1..]
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => {
                        format!("{key}=***")
                    }
                    _ => pair.to_string(),
                })
                .collect();
            out.push_str(&params.join("&"));
        }
        None => out.push_str(rest),
    }
    out
}

/// Every word of `text` that looks like a URL, redacted.
pub fn redact_words(text: &str) -> String {
    text.split(' ')
        .map(|word| {
            if word.contains("://") {
                redact_url(word)
            } else {
                word.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_masked_and_the_rest_kept() {
        assert_eq!(
            redact_url("postgres://bob:s3cret@127.0.0.1:5432/test"),
            "postgres://bob:***@127.0.0.1:5432/test"
        );
        assert_eq!(
            redact_url("mysql://root@127.0.0.1/test?password=x&ssl=0"),
            "mysql://root@127.0.0.1/test?password=***&ssl=0"
        );
        assert_eq!(redact_url("sqlite"), "sqlite");
        assert_eq!(
            redact_words("sledge run http.dynamic -p db=postgres://a:b@h/d"),
            "sledge run http.dynamic -p db=postgres://a:***@h/d"
        );
    }
}
