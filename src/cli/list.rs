//! `sledge list`.

use std::path::PathBuf;

use clap::Args;

use super::output::{ExitStatus, open_existing_store, print};
use crate::report;
use crate::store::StoreError;
use crate::visible::Escaped;

/// Options of `sledge list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print the list as JSON.
    #[arg(long)]
    json: bool,
}

/// Prints the stored runs. A store that does not exist holds no runs: it
/// is listed as empty and not created.
pub fn execute(args: ListArgs, store: Option<PathBuf>) -> anyhow::Result<ExitStatus> {
    let store = match open_existing_store(store) {
        Ok(store) => store,
        Err(err) => match err.downcast_ref::<StoreError>() {
            Some(StoreError::NoStore { path }) => {
                if args.json {
                    print("[]\n")?;
                } else {
                    print(&format!(
                        "no runs stored yet (there is no store at {}); `sledge run` makes one\n",
                        path.display()
                    ))?;
                }
                return Ok(ExitStatus::Success);
            }
            _ => return Err(err),
        },
    };
    let runs = store.list_runs()?;
    if args.json {
        print(&(serde_json::to_string_pretty(&runs)? + "\n"))?;
    } else {
        print(&report::listing::runs(&Escaped::new(runs)))?;
    }
    Ok(ExitStatus::Success)
}
