//! `sledge list`.

use clap::Args;

use super::format_args::{FormatArgs, FormatFlag, FormatSet};
use super::output::{ExitStatus, open_existing_store, print};
use crate::report::export::{Format, View};
use crate::store::StoreError;
use crate::store::StoreLocation;

/// Options of `sledge list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    format: FormatArgs<ListFormats>,
}

/// The formats of `sledge list`: `--json`.
#[derive(Debug)]
pub struct ListFormats;

impl FormatSet for ListFormats {
    const FLAGS: &'static [FormatFlag] = &[FormatFlag {
        format: Format::Json,
        help: "Print the list as JSON",
    }];
}

/// Prints the stored runs. A store that does not exist holds no runs: it
/// is listed as empty and not created.
pub fn execute(args: ListArgs, store: Option<StoreLocation>) -> anyhow::Result<ExitStatus> {
    let format = args.format.format();
    let store = match open_existing_store(store) {
        Ok(store) => store,
        Err(err) => match err.downcast_ref::<StoreError>() {
            Some(StoreError::NoStore { path }) => {
                // The table says why the list is empty; JSON is an empty list.
                print(&format.render(&View::Runs {
                    runs: &[],
                    no_store_at: Some(path),
                })?)?;
                return Ok(ExitStatus::Success);
            }
            _ => return Err(err),
        },
    };
    let runs = store.list_runs()?;
    print(&format.render(&View::Runs {
        runs: &runs,
        no_store_at: None,
    })?)?;
    Ok(ExitStatus::Success)
}
