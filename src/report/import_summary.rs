//! What `sledge import` prints: a line per run (added under which id, or
//! already stored), a line for a document that holds none, and the totals
//! with the store they went to.

use std::path::Path;

use crate::store::Imported;
use crate::suite::import::DocumentImported;
use crate::visible;

/// The lines of an import of `documents` into the store at `store`.
pub fn render(documents: &[DocumentImported<'_>], store: &Path) -> String {
    let (mut added, mut present) = (0, 0);
    let mut out = String::new();
    for document in documents {
        for (run, outcome) in &document.runs {
            // The document's own words, escaped: it may hold anything.
            let what = visible::escape(&format!(
                "{} ({} · {} · {})",
                run.uuid,
                if run.host.hostname.is_empty() {
                    "unknown host"
                } else {
                    &run.host.hostname
                },
                run.profile,
                run.started
            ))
            .into_owned();
            match outcome {
                Imported::Added { id, .. } => {
                    added += 1;
                    out.push_str(&format!("imported run {what} as run {id}\n"));
                }
                Imported::AlreadyStored { id, .. } => {
                    present += 1;
                    out.push_str(&format!(
                        "run {what} is already stored as run {id}: nothing added\n"
                    ));
                }
            }
        }
        if document.runs.is_empty() {
            out.push_str(&format!("{}: holds no runs\n", document.path.display()));
        }
    }
    out.push_str(&format!(
        "{added} run{} added, {present} already stored, in {}\n",
        if added == 1 { "" } else { "s" },
        store.display()
    ));
    out
}
