//! `http.dynamic`: a page that connects to a database, reads one 100 B row
//! and disconnects on every request (the article's PHP + MySQL page).

use crate::engine::{Case, CaseEnv, ParamKind, ParamSet, ParamSpec, Workload};
use crate::http::server::Database;

use super::case::{HttpCase, common_params};

/// The `http.dynamic` workload.
pub struct DynamicPage;

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
        let mut params = vec![ParamSpec {
            name: "db",
            help: "the page's database: sqlite (an embedded file); postgres:// and mysql:// are not built in yet",
            kind: ParamKind::Text,
            default: "sqlite",
        }];
        params.extend(common_params());
        params
    }
    fn build(&self, p: &ParamSet, env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        Database::check_param(p.str("db"))?;
        Ok(Box::new(HttpCase::build(
            p,
            env,
            Vec::new(),
            true,
            "/dynamic".to_string(),
        )?))
    }
}
