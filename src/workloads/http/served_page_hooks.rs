//! The [`Workload`](crate::engine::Workload) hooks every page the built-in
//! server serves answers alike (`http.static`, `http.dynamic`): what makes
//! them so is the server and its load generator running together, not
//! the page, so the answers are written once here.

/// The hooks of a workload that runs the built-in server under the
/// built-in generator, for use inside its `impl Workload` block:
///
/// - `cpus_used`: a server and its load generator run together, each with
///   threads of its own: more than the parameters count;
/// - `later_params`: the parameters the `http.*` workloads gained after
///   runs were stored without them ([`super::clients_from::LATER_PARAMS`]);
/// - `latency_spectrum`: its histogram is the requests' latencies, so the
///   report draws their percentile spectrum.
macro_rules! served_page_hooks {
    () => {
        fn cpus_used(&self, _params: &$crate::engine::ParamSet) -> Option<usize> {
            None
        }

        fn later_params(&self) -> &'static [$crate::engine::LaterParam] {
            $crate::workloads::http::clients_from::LATER_PARAMS
        }

        fn latency_spectrum(&self) -> bool {
            true
        }
    };
}
pub(super) use served_page_hooks;
