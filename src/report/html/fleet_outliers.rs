//! The report's section on the outlier hosts of a fleet
//! ([`crate::report::fleet_outliers`]): shown when the runs cover three or
//! more hosts of one CPU model, as after `sledge fleet run`.

use std::fmt::Write as _;

use super::escape;
use crate::report::fleet_outliers::FleetOutliers;

/// The section, or nothing when no CPU model has three hosts among the
/// runs.
pub fn section(view: &FleetOutliers) -> String {
    if view.populations.is_empty() {
        return String::new();
    }
    let mut out = String::from("<section id=\"fleet-outliers\">\n<h2>Outlier hosts</h2>\n");
    let _ = writeln!(
        out,
        "<p class=\"note\">A host is named when its value of a case lies more than {} modified \
         z-scores (median absolute deviations, Iglewicz and Hoaglin) from the median of the hosts \
         sharing its CPU model; the spread is at least the hosts' median 95% CI half-width and {}% \
         of the median.</p>",
        view.threshold,
        view.min_relative_spread * 100.0
    );
    for p in &view.populations {
        let _ = writeln!(
            out,
            "<h3>{} hosts of {}</h3>",
            p.hosts.len(),
            escape(&p.cpu_model)
        );
        if p.outliers.is_empty() {
            out.push_str("<p>None: every host is within the fleet's spread in every case.</p>\n");
            continue;
        }
        out.push_str(
            "<table class=\"comparison\">\n<thead><tr><th>host</th><th>run</th><th>case</th>\
             <th>metric</th><th>ratio to the median</th><th>modified z</th><th>verdict</th>\
             <th>what differs</th></tr></thead>\n<tbody>\n",
        );
        for o in &p.outliers {
            let differs = if o.differences.is_empty() {
                "no inventory fact".to_string()
            } else {
                o.differences
                    .iter()
                    .map(|d| {
                        format!(
                            "{}: {} (the others: {})",
                            escape(&d.what),
                            escape(&d.value),
                            escape(&d.others.join(", "))
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("<br>")
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{:.3}×</td>\
                 <td class=\"num\">{:+.1}</td><td class=\"{}\">{}</td><td>{}</td></tr>",
                escape(&o.host),
                o.run,
                escape(&o.case),
                escape(&o.metric),
                o.ratio,
                o.modified_z,
                o.verdict,
                o.verdict,
                differs
            );
        }
        out.push_str("</tbody>\n</table>\n");
    }
    out.push_str("</section>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;
    use crate::report::fleet_outliers::fleet_outliers;
    use crate::stats::Direction;

    #[test]
    fn the_section_names_the_slow_host_and_is_absent_for_two_hosts() {
        let runs: Vec<_> = [1000.0, 990.0, 300.0]
            .iter()
            .enumerate()
            .map(|(i, &mean)| {
                let m = fixtures::metric(
                    "events_per_sec",
                    "events/s",
                    Direction::Higher,
                    &[mean, mean],
                );
                let case = fixtures::case("cpu.primes", &[("threads", "1")], m);
                let mut run = fixtures::run(i as i64 + 1, &format!("h{i}<"), 2, vec![case]);
                run.host.memory.total_bytes = if i == 2 { 4 << 30 } else { 8 << 30 };
                run
            })
            .collect();
        let html = section(&fleet_outliers(&runs));
        assert!(
            html.contains("<h3>3 hosts of Example CPU @ 2.0GHz</h3>"),
            "{html}"
        );
        assert!(
            html.contains(
                "<tr><td>h2&lt;</td><td>3</td><td>cpu.primes threads=1</td><td>events_per_sec</td>\
                 <td class=\"num\">0.303×</td>"
            ),
            "{html}"
        );
        assert!(
            html.contains("memory: 4.0 GiB (the others: 8.0 GiB)"),
            "{html}"
        );
        assert_eq!(section(&fleet_outliers(&runs[..2])), "");
    }
}
