//! `http.dynamic`: a page that connects to a database, reads one 100 B row
//! and disconnects on every request (the article's PHP + MySQL page).
//!
//! `db` picks the database: an embedded SQLite file, or a PostgreSQL or
//! MariaDB/MySQL server by URL. A URL that does not parse is refused when
//! the case is built; a server that cannot be reached or refuses the login
//! fails the case in `prepare`, before any trial. Preparing creates a
//! table for the case on the server and cleanup drops it.

use crate::engine::{Case, CaseEnv, ParamKind, ParamRole, ParamSet, ParamSpec, Params, Workload};
use crate::http::server::DbSource;

use super::case::{HttpCase, HttpLoadParams, common_params};
use super::served_page_hooks::served_page_hooks;

/// The `http.dynamic` workload.
pub struct DynamicPage;

crate::workload_params! {
    /// The parameters of `http.dynamic` before the shared ones.
    pub struct DynamicPageParams {
        db: String = ParamSpec {
        name: "db",
        role: ParamRole::Other,
        help: "the page's database: sqlite (an embedded file), postgres://user@host[:port]/database (or libpq's `host=... user=... dbname=...`) or mysql://user@host[:port]/database (no TLS; a table is created for the case and dropped after it); a password is best left out, as the command line is visible to other users: PGPASSWORD or ~/.pgpass (PGPASSFILE), ~/.my.cnf [client] or MYSQL_PWD are used; one given anyway is masked as *** wherever the case is shown or stored",
        kind: ParamKind::Text,
        default: "sqlite",
    },
    }
}

impl Workload for DynamicPage {
    fn id(&self) -> &'static str {
        "http.dynamic"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "requests/s for a page that opens a database, reads one 100 B row and disconnects per request"
    }
    fn params(&self) -> Vec<ParamSpec> {
        let mut params = DynamicPageParams::specs();
        params.extend(common_params());
        params
    }
    fn build(&self, p: &ParamSet, env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let source = DbSource::parse(&DynamicPageParams::from_set(p).db)?;
        Ok(Box::new(HttpCase::build(
            &HttpLoadParams::from_set(p),
            env,
            Vec::new(),
            Some(source),
            "/dynamic".to_string(),
        )?))
    }

    served_page_hooks!();
}
