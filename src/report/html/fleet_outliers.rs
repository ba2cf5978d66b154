//! The report's section on the outlier hosts of a fleet
//! ([`crate::analysis::host_outliers`]): shown when the runs cover three or
//! more hosts of one CPU model, as after `sledge fleet run`.

use maud::{Markup, html};

use crate::analysis::host_outliers::FleetOutliers;

/// The section, or nothing when no CPU model has three hosts among the
/// runs.
pub fn section(view: &FleetOutliers) -> Markup {
    if view.populations.is_empty() {
        return html! {};
    }
    html! {
        section id="fleet-outliers" {
            "\n" h2 { "Outlier hosts" } "\n"
            p class="note" {
                "A host is named when its value of a case lies more than " (view.threshold)
                " modified z-scores (median absolute deviations, Iglewicz and Hoaglin) from the \
                 median of the hosts sharing its CPU model; the spread is at least the hosts' \
                 median 95% CI half-width and " (view.min_relative_spread * 100.0) "% of the median."
            }
            "\n"
            @for p in &view.populations {
                h3 { (p.hosts.len()) " hosts of " (p.cpu_model) } "\n"
                @if p.outliers.is_empty() {
                    p { "None: every host is within the fleet's spread in every case." } "\n"
                } @else {
                    table class="comparison" {
                        "\n"
                        thead {
                            tr {
                                th { "host" } th { "run" } th { "case" } th { "metric" }
                                th { "ratio to the median" } th { "modified z" } th { "verdict" }
                                th { "what differs" }
                            }
                        }
                        "\n"
                        tbody {
                            "\n"
                            @for o in &p.outliers {
                                tr {
                                    td { (o.host) }
                                    td { (o.run) }
                                    td { (o.case) }
                                    td { (o.metric) }
                                    td class="num" { (format!("{:.3}×", o.ratio)) }
                                    td class="num" { (format!("{:+.1}", o.modified_z)) }
                                    td class=(o.verdict) { (o.verdict) }
                                    td {
                                        @if o.differences.is_empty() {
                                            "no inventory fact"
                                        }
                                        @for (k, d) in o.differences.iter().enumerate() {
                                            @if k > 0 { br; }
                                            (d.what) ": " (d.value) " (the others: "
                                            (d.others.join(", ")) ")"
                                        }
                                    }
                                }
                                "\n"
                            }
                        }
                        "\n"
                    }
                    "\n"
                }
            }
        }
        "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Direction;
    use crate::analysis::host_outliers::fleet_outliers;
    use crate::report::fixtures;

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
        let html = section(&fleet_outliers(&runs)).into_string();
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
        assert_eq!(section(&fleet_outliers(&runs[..2])).into_string(), "");
    }
}
