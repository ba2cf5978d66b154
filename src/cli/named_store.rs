//! Which store the user named: `--store`, else the `SLEDGE_STORE`
//! environment variable, else none (the default location). Read here and
//! not by clap, so that an empty variable is named as such.

use std::path::Path;

use clap::builder::{PathBufValueParser, TypedValueParser};

use super::output::UsageError;
use crate::store::StoreLocation;

/// The environment variable that names the store when `--store` is not
/// given.
pub(super) const STORE_ENV: &str = "SLEDGE_STORE";

/// `--store`'s parser: a path (clap refuses an empty one, naming the
/// flag), then a file or a PostgreSQL URL, decided once here.
pub(super) fn store_location() -> impl TypedValueParser<Value = StoreLocation> {
    PathBufValueParser::new().map(|path| StoreLocation::from_arg(&path))
}

/// The store the user named: `--store`, else `SLEDGE_STORE` (`env`), else
/// none (the default location). An empty `SLEDGE_STORE` is a mistake
/// named as such, not an empty path.
pub(super) fn store_arg(
    flag: Option<StoreLocation>,
    env: Option<std::ffi::OsString>,
) -> Result<Option<StoreLocation>, UsageError> {
    match (flag, env) {
        (Some(location), _) => Ok(Some(location)),
        (None, Some(value)) if value.is_empty() => Err(UsageError(format!(
            "{STORE_ENV} is set but empty: set it to a store file (a path such as ~/results.db) or a postgres:// URL, or unset it to use the default store ({})",
            crate::store::Store::default_path().display()
        ))),
        (None, Some(value)) => Ok(Some(StoreLocation::from_arg(Path::new(&value)))),
        (None, None) => Ok(None),
    }
}
