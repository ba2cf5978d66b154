//! The data cases share between their rounds, made when first needed and
//! removed once no case still to run needs it (see `shared_data.rs`).

use std::collections::BTreeMap;
use std::time::Instant;

use super::context::{Cancelled, TrialContext};
use super::executor::{RoundOutcome, guarded};
use super::shared_data::SharedPreparation;
use super::workload::{CaseEnv, PlannedCase};

/// The shared data prepared so far, by the workload's id and its key.
#[derive(Default)]
pub(super) struct SharedPool {
    ready: BTreeMap<String, Box<dyn SharedPreparation>>,
}

/// The pool's key for what `planned` shares, if anything.
fn key_of(planned: &PlannedCase) -> Option<String> {
    let key = planned.workload.shared_key(&planned.params)?;
    Some(format!("{} {key}", planned.workload.id()))
}

impl SharedPool {
    /// Where `planned`'s round finds the data it shares, prepared now if it
    /// is the first to need it; `None` for a case that prepares its own.
    /// `Err` is the outcome of a round that failed or was cancelled while
    /// preparing (its time included), for the caller to take in as that
    /// round. A failure is not kept: the next case needing the data tries
    /// again, and fails with its own error.
    pub(super) fn ensure(
        &mut self,
        planned: &PlannedCase,
        env: &CaseEnv,
        ctx: &TrialContext,
    ) -> Result<Option<String>, RoundOutcome> {
        let Some(key) = key_of(planned) else {
            return Ok(None);
        };
        if let Some(ready) = self.ready.get(&key) {
            return Ok(Some(ready.for_rounds()));
        }
        let started = Instant::now();
        match guarded(|| planned.workload.prepare_shared(&planned.params, env, ctx)) {
            Ok(prepared) => {
                let found = prepared.for_rounds();
                self.ready.insert(key, prepared);
                Ok(Some(found))
            }
            Err(err) => {
                let cancelled = err.is::<Cancelled>() || ctx.cancel.is_cancelled();
                Err(RoundOutcome {
                    error: (!cancelled).then(|| {
                        format!("{:#}", err.context("preparing the data its rounds share"))
                    }),
                    cancelled,
                    seconds: started.elapsed().as_secs_f64(),
                    ..RoundOutcome::default()
                })
            }
        }
    }

    /// Removes the data none of `cases` needs.
    pub(super) fn keep_only<'a>(&mut self, cases: impl Iterator<Item = &'a PlannedCase>) {
        let needed: Vec<String> = cases.filter_map(key_of).collect();
        let unneeded: Vec<String> = self
            .ready
            .keys()
            .filter(|key| !needed.contains(key))
            .cloned()
            .collect();
        for key in unneeded {
            self.release(&key);
        }
    }

    /// Removes everything prepared.
    pub(super) fn release_all(&mut self) {
        let keys: Vec<String> = self.ready.keys().cloned().collect();
        for key in keys {
            self.release(&key);
        }
    }

    fn release(&mut self, key: &str) {
        if let Some(prepared) = self.ready.remove(key)
            && let Err(err) = prepared.release()
        {
            crate::say!("warning: removing the data shared by the rounds of {key}: {err:#}");
        }
    }
}
