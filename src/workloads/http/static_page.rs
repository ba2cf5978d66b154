//! `http.static`: a static response of a fixed size (the articles' 1 B,
//! 2 KiB, 200 KiB, 2 MiB and 10 MiB pages) from the built-in server.

use crate::engine::{Case, CaseEnv, ParamKind, ParamRole, ParamSet, ParamSpec, Params, Workload};
use crate::http::server::static_path;

use super::case::{HttpCase, HttpLoadParams, common_params};
use super::served_page_hooks::served_page_hooks;

/// The `http.static` workload.
pub struct StaticPage;

crate::workload_params! {
    /// The parameters of `http.static` before the shared ones.
    pub struct StaticPageParams {
        size: u64 = ParamSpec {
            name: "size",
            role: ParamRole::Other,
            help: "response body size (the articles used 1, 2K, 200K, 2M, 10M)",
            kind: ParamKind::Size {
                min: 0,
                max: 1 << 30,
                power_of_two: false,
            },
            default: "1",
        },
    }
}

impl Workload for StaticPage {
    /// The articles' table: a page size per row, a concurrency per
    /// column.
    fn pivot(&self) -> Option<(&'static str, &'static str)> {
        Some(("size", "concurrency"))
    }
    fn id(&self) -> &'static str {
        "http.static"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "requests/s for a static response from the built-in server over loopback (like ab/wrk against a file)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        let mut params = StaticPageParams::specs();
        params.extend(common_params());
        params
    }
    fn build(&self, p: &ParamSet, env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let size = StaticPageParams::from_set(p).size;
        Ok(Box::new(HttpCase::build(
            &HttpLoadParams::from_set(p),
            env,
            vec![size],
            None,
            static_path(size),
        )?))
    }

    served_page_hooks!();
}
