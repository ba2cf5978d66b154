//! `test.toy`: the smallest whole workload, and the proof that one plugs in
//! by this one file and one line in the registry ([`super::all`]): its
//! parameters are declared once as a typed struct (validated, swept and
//! listed by `sledge workloads` from that declaration), it builds its cases
//! from the struct, and it asks the report for a table of its own and adds
//! a section of its own to a run's report, each through a [`Workload`]
//! hook. It measures nothing: a trial's `area` is the shape's area at
//! `size`, so tests know every value in advance.
//!
//! Like `test.scripted`, it exists only with `SLEDGE_TEST_WORKLOADS=1`.

use crate::engine::{
    Case, CaseEnv, IndexEntryOf, Metric, ParamKind, ParamRole, ParamSet, ParamSpec, Params,
    RunSection, TrialContext, TrialOutput, Workload,
};
use crate::results::RunRecord;
use crate::visible::Escaped;

crate::param_choice! {
    /// `shape`: what is drawn.
    pub enum Shape {
        Square = "square",
        Triangle = "triangle",
    }
}

crate::workload_params! {
    /// The parameters of `test.toy`.
    pub struct ToyParams {
        shape: Shape = ParamSpec {
            name: "shape",
            role: ParamRole::Other,
            help: "square or triangle",
            kind: ParamKind::Choice(Shape::NAMES),
            default: "square",
        },
        size: u64 = ParamSpec {
            name: "size",
            role: ParamRole::Other,
            help: "side length",
            kind: ParamKind::Int { min: 1, max: 1000 },
            default: "2",
        },
    }
}

/// See the module documentation.
pub struct Toy;

impl Workload for Toy {
    fn id(&self) -> &'static str {
        "test.toy"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "the area of a shape (a workload in one file, for sledge's own tests)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        ToyParams::specs()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = ToyParams::from_set(p);
        let side = p.size as f64;
        let area = match p.shape {
            Shape::Square => side * side,
            Shape::Triangle => side * side / 2.0,
        };
        Ok(Box::new(ToyCase { area }))
    }
    /// Its sweeps print as a table: a shape per row, a size per column.
    fn pivot(&self) -> Option<(&'static str, &'static str)> {
        Some(("shape", "size"))
    }
    /// Its runs end with the total of their areas, as a family's index
    /// ends a run of its tests.
    fn run_section(&self) -> Option<&'static dyn RunSection> {
        Some(&ToyTotal)
    }
}

/// The section `test.toy` adds to a run's report: the sum of its cases'
/// mean areas, which tests know in advance.
struct ToyTotal;

impl ToyTotal {
    /// `toy: total area 31.5 over 6 cases`; `None` without a toy case
    /// that has a value.
    fn total(run: &RunRecord) -> Option<String> {
        let areas: Vec<f64> = run
            .cases
            .iter()
            .filter(|c| c.workload == Toy.id())
            .filter_map(|c| Some(c.metrics.first()?.summary.mean))
            .collect();
        let total: f64 = areas.iter().sum();
        (!areas.is_empty()).then(|| format!("toy: total area {total} over {} cases", areas.len()))
    }
}

impl RunSection for ToyTotal {
    fn id(&self) -> &'static str {
        "test.toy.total"
    }

    fn text(&self, run: &Escaped<RunRecord>, _: IndexEntryOf) -> String {
        Self::total(run).map_or_else(String::new, |total| format!("\n{total}\n"))
    }

    fn line(&self, run: &Escaped<RunRecord>, _: IndexEntryOf) -> Option<String> {
        Self::total(run)
    }
}

struct ToyCase {
    area: f64,
}

impl Case for ToyCase {
    fn trial(&mut self, _ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        Ok(TrialOutput {
            metrics: vec![Metric::higher("area", "u²", self.area)],
            latency_ns: None,
        })
    }
}
