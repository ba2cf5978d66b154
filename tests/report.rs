//! `sledge report`: the HTML report, checked as text and rendered by a real
//! browser (headless Chromium) when one is installed.
//!
//! Without Chromium the browser half is skipped with a notice on stderr,
//! unless `SLEDGE_TEST_BROWSER=require` (as CI sets it), which makes a
//! missing browser a failure.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use predicates::prelude::*;
use serde_json::Value;

use crate::common::{BROWSER, FAST, Sandbox, find_program, wait_bounded};

const HOSTILE: &str = "<script>alert(1)</script>";

/// Two real runs (a 4-step threads sweep and an HTTP concurrency sweep,
/// which has latency histograms) and a third, imported, whose host name
/// and command line are hostile HTML.
fn fixture_runs(sandbox: &Sandbox) {
    for _ in 0..2 {
        sandbox
            .sledge()
            .args(["run", "cpu.primes", "http.static"])
            .args(["-p", "max_prime=2000", "-p", "time=0.05"])
            .args(["-p", "threads=1,2,3,4", "-p", "concurrency=1,4"])
            .args(["-p", "requests=0"])
            .args(FAST)
            .assert()
            .success();
    }
    let out = sandbox.sledge().args(["export", "2"]).assert().success();
    let mut document: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let run = &mut document["runs"][0];
    run["uuid"] = "11111111-2222-4333-8444-555555555555".into();
    run["host"]["hostname"] = HOSTILE.into();
    run["command_line"] = format!("sledge run {HOSTILE}").into();
    run["cases"][0]["warnings"] = vec![HOSTILE].into();
    let file = sandbox.path().join("hostile.json");
    std::fs::write(&file, document.to_string()).unwrap();
    sandbox.sledge().arg("import").arg(&file).assert().success();
}

/// Renders `page` with headless Chromium, kept off the network; returns
/// the DOM it built and writes a screenshot to `png`.
fn render_in_chromium(browser: &Path, page: &Path, png: &Path, scratch: &Path) -> String {
    let dom_file = scratch.join("dom.html");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
            "--window-size=1280,2000",
        ])
        .arg(format!(
            "--user-data-dir={}",
            scratch.join("profile").display()
        ))
        .arg(format!("--screenshot={}", png.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&dom_file).unwrap())
        .stderr(std::fs::File::create(scratch.join("chromium.stderr")).unwrap())
        .spawn()
        .expect("start chromium");
    let status = wait_bounded(&mut child, Duration::from_secs(120));
    let stderr = std::fs::read_to_string(scratch.join("chromium.stderr")).unwrap_or_default();
    assert!(status.success(), "chromium failed: {status:?}\n{stderr}");
    std::fs::read_to_string(&dom_file).unwrap()
}

/// Share of pixels that are not (nearly) white, and how many distinct
/// colours the screenshot holds.
fn ink(png: &Path) -> (f64, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buffer).unwrap();
    let channels = info.color_type.samples();
    let pixels = &buffer[..info.buffer_size()];
    let mut colours = std::collections::HashSet::new();
    let mut inked = 0usize;
    let total = pixels.len() / channels;
    for px in pixels.chunks(channels) {
        if px[..3].iter().any(|&c| c < 235) {
            inked += 1;
        }
        if colours.len() < 1000 {
            colours.insert([px[0], px[1], px[2]]);
        }
    }
    (inked as f64 / total as f64, colours.len())
}

#[test]
fn a_report_renders_in_a_browser_with_tables_charts_and_escaped_strings() {
    let sandbox = Sandbox::new();
    fixture_runs(&sandbox);
    let page = sandbox.path().join("report.html");
    sandbox
        .sledge()
        .args(["report", "1", "2", "last", "-o"])
        .arg(&page)
        .assert()
        .success()
        .stderr(predicate::str::contains("wrote the report of 3 runs"));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.to_lowercase().contains("<script"),
        "a script tag in the report"
    );
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("<h3>run 3 against run 1 (baseline)</h3>"));
    assert!(html.contains("USL λ="), "the 4-step sweep has a fit");

    if !BROWSER.met_in_part("rendering the report in a browser") {
        return;
    }
    let browser = find_program(BROWSER.programs[0].names).expect("found by BROWSER.met");
    let png = sandbox.path().join("report.png");
    let dom = render_in_chromium(&browser, &page, &png, sandbox.path());

    // The DOM the browser built holds the tables and the charts...
    for table in [
        "class=\"hosts\"",
        "class=\"comparison\"",
        "class=\"summary\"",
        "class=\"scaling\"",
    ] {
        assert!(
            dom.contains(&format!("<table {table}")),
            "no {table} table in the DOM"
        );
    }
    assert_eq!(dom.matches("<table class=\"comparison\"").count(), 2);
    // A bar chart per case (4 + 2), scaling charts (cpu.primes, http.static)
    // and a latency spectrum per HTTP case (2).
    let svgs = dom.matches("<svg").count();
    assert_eq!(svgs, 6 + 2 + 2, "SVG charts in the DOM");
    assert!(dom.matches("<rect").count() >= 6 && dom.matches("<circle").count() >= 12);
    // ...and the hostile host name as text, not as an element.
    assert!(
        !dom.to_lowercase().contains("<script"),
        "the browser made a script element"
    );
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));

    // The screenshot shows a page, not a blank window.
    let (share, colours) = ink(&png);
    assert!(
        share > 0.03,
        "only {:.1}% of the screenshot is not white",
        share * 100.0
    );
    assert!(colours > 20, "only {colours} colours in the screenshot");
}

#[test]
fn report_of_an_unknown_run_is_a_usage_error() {
    let sandbox = Sandbox::new();
    sandbox
        .sledge()
        .args([
            "run",
            "cpu.primes",
            "-p",
            "max_prime=1000",
            "-p",
            "time=0.05",
        ])
        .args(FAST)
        .assert()
        .success();
    let page = sandbox.path().join("r.html");
    sandbox
        .sledge()
        .args(["report", "1", "42", "-o"])
        .arg(&page)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no run 42"));
    assert!(!page.exists());
    sandbox.sledge().args(["report", "last~5"]).assert().code(2);
    // One run to stdout.
    sandbox
        .sledge()
        .args(["report", "1"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("<!DOCTYPE html>"));
}

#[test]
fn a_stored_value_no_chart_can_show_is_a_note_not_a_hang() {
    let sandbox = Sandbox::new();
    for _ in 0..2 {
        sandbox
            .sledge()
            .args([
                "run",
                "cpu.primes",
                "-p",
                "max_prime=1000",
                "-p",
                "time=0.05",
            ])
            .args(FAST)
            .assert()
            .success();
    }
    // A store written before `import` refused such values: a mean of
    // 1e308, above a positive CI low end, which wants a logarithmic axis
    // that plotters cannot lay out.
    let db = rusqlite::Connection::open(sandbox.store()).unwrap();
    let changed = db
        .execute(
            "UPDATE metric SET mean = 1e308, ci_low = min
             WHERE id = (SELECT min(id) FROM metric)",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(db);
    let page = sandbox.path().join("report.html");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("sledge"))
        .current_dir(sandbox.path())
        .env("SLEDGE_STORE", sandbox.store())
        .args(["report", "1", "2", "-o"])
        .arg(&page)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(120));
    assert!(status.success(), "{status:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<p class=\"note\">chart not drawn: it would show 1e308,"),
        "{html}"
    );
}
