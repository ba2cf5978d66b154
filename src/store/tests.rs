//! Unit tests of the results store.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use rusqlite::Connection;
use serde_json::json;

use super::handle::default_path_from;
use super::sql_error::sql_err;
use super::*;
use crate::monitor::TrialHealth;
use crate::probe::HostInfo;
use crate::results::{CaseRecord, MetricRecord, RoundRecord, RunRecord, RunStatus, TrialRecord};
use crate::stats::{CiBasis, Direction, Levels, Summary};

/// A host inventory named `name`, if `HostInfo` has a `hostname` field.
fn host(name: &str) -> HostInfo {
    serde_json::from_value(json!({ "hostname": name })).unwrap_or_default()
}

/// The host name the store should list for `host`.
fn hostname_of(host: &HostInfo) -> String {
    serde_json::to_value(host).unwrap()["hostname"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// A trial health flagged as disturbed, as far as `TrialHealth` allows.
fn disturbed_health() -> TrialHealth {
    serde_json::from_value(json!({ "flags": ["steal"] })).unwrap_or_default()
}

fn run(profile: &str, started: &str, hostname: &str) -> RunRecord {
    RunRecord {
        id: 0,
        uuid: String::new(),
        started: started.to_string(),
        finished: None,
        sledge_version: "0.1.0".to_string(),
        profile: profile.to_string(),
        command_line: format!("sledge run --profile {profile}"),
        status: RunStatus::Running,
        cpus: vec![0, 1],
        notes: vec!["price=2400EUR".to_string(), "rack 3".to_string()],
        warnings: vec!["host was busy at the start".to_string()],
        host: host(hostname),
        cases: Vec::new(),
    }
}

fn summary(samples: &[f64]) -> Summary {
    let n = samples.len();
    let mean = samples.iter().sum::<f64>() / n as f64;
    Summary {
        n,
        mean,
        median: samples[n / 2],
        stddev: 1.5,
        ci_low: mean - 1.0,
        ci_high: mean + 1.0,
        min: samples.iter().copied().fold(f64::INFINITY, f64::min),
        max: samples.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    }
}

fn histogram_bytes() -> Vec<u8> {
    let mut histogram = Histogram::<u64>::new(3).unwrap();
    for value in [1_000, 2_500, 2_600, 40_000, 1_000_000] {
        histogram.record(value).unwrap();
    }
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(&histogram, &mut bytes)
        .unwrap();
    bytes
}

/// A case with three trials, two metrics (one outlier), parameters,
/// warnings and a latency histogram.
fn full_case() -> CaseRecord {
    let ops = vec![100.0, 101.5, 250.0];
    let latency = vec![9.5, 9.25, 4.0];
    CaseRecord {
        workload: "net.echo".to_string(),
        workload_version: 3,
        params: BTreeMap::from([
            ("connections".to_string(), "16".to_string()),
            ("size".to_string(), "4096".to_string()),
        ]),
        given_as_all: Some(vec!["connections".to_string()]),
        warnings: vec!["trial 2 was disturbed (steal)".to_string()],
        error: None,
        rounds: vec![
            RoundRecord {
                round: 0,
                order: 3,
                seconds: 4.5,
            },
            RoundRecord {
                round: 1,
                order: 0,
                seconds: 2.5,
            },
        ],
        trials: vec![
            TrialRecord {
                index: 0,
                round: 0,
                replaced: false,
                seconds: 2.0,
                health: TrialHealth::default(),
            },
            TrialRecord {
                index: 1,
                round: 0,
                replaced: true,
                seconds: 2.125,
                health: disturbed_health(),
            },
            TrialRecord {
                index: 2,
                round: 1,
                replaced: false,
                seconds: 1.75,
                // What a bare-metal host's sensors add.
                health: serde_json::from_value(json!({
                    "clock_mhz": 3187.5, "clock_source": "aperf_mperf",
                    "throttle_events": 1, "temperature_max_c": 81.5,
                    "energy_joules": 210.25, "power_watts": 120.5,
                    "flags": ["throttled"]
                }))
                .unwrap(),
            },
        ],
        metrics: vec![
            MetricRecord {
                name: "ops_per_sec".to_string(),
                unit: "ops/s".into(),
                direction: Direction::Higher,
                summary: summary(&ops),
                levels: Some(Levels {
                    ci_basis: CiBasis::Rounds,
                    round_means: vec![100.0, 250.0],
                    between_round_sd: Some(106.066),
                    within_round_sd: None,
                }),
                samples: ops,
                outliers: vec![false, false, true],
            },
            MetricRecord {
                name: "p99_latency".to_string(),
                unit: "us".into(),
                direction: Direction::Lower,
                summary: summary(&latency),
                levels: None,
                samples: latency,
                outliers: vec![false, false, false],
            },
        ],
        latency_histogram: Some(histogram_bytes()),
        values: None,
    }
}

/// A failed case with a single trial and metric, no parameters and no
/// histogram.
fn small_case(workload: &str) -> CaseRecord {
    CaseRecord {
        workload: workload.to_string(),
        workload_version: 1,
        params: BTreeMap::new(),
        given_as_all: None,
        warnings: Vec::new(),
        error: Some("cannot allocate 64 GiB".to_string()),
        rounds: Vec::new(),
        trials: vec![TrialRecord {
            index: 0,
            round: 0,
            replaced: false,
            seconds: 0.5,
            health: TrialHealth::default(),
        }],
        metrics: vec![MetricRecord {
            name: "events_per_sec".to_string(),
            unit: "events/s".into(),
            direction: Direction::Higher,
            summary: summary(&[42.0]),
            levels: None,
            samples: vec![42.0],
            outliers: vec![false],
        }],
        latency_histogram: None,
        values: None,
    }
}

/// A new store in a fresh temporary directory (kept alive by the guard).
fn new_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("results.db")).unwrap();
    (dir, store)
}

/// Stores a finished run with `cases` small cases; returns its id.
fn store_run(store: &mut Store, profile: &str, started: &str, cases: usize) -> i64 {
    let id = store.begin_run(&run(profile, started, "box")).unwrap();
    for i in 0..cases {
        store
            .add_case(id, &small_case(&format!("cpu.case{i}")))
            .unwrap();
    }
    store
        .finish_run(id, RunStatus::Complete, "2026-01-01T01:00:00Z", &[])
        .unwrap();
    id
}

#[test]
fn round_trip_of_a_run_with_two_cases() {
    let (_dir, mut store) = new_store();
    let mut record = run("quick", "2026-01-01T00:00:00Z", "bench-01");
    let id = store.begin_run(&record).unwrap();
    let first = full_case();
    let second = small_case("memory.block");
    let first_id = store.add_case(id, &first).unwrap();
    let second_id = store.add_case(id, &second).unwrap();
    assert!(second_id > first_id);
    let warnings = vec!["cpu 1 throttled".to_string(), "swap in use".to_string()];
    store
        .finish_run(id, RunStatus::Complete, "2026-01-01T00:10:00Z", &warnings)
        .unwrap();

    record.id = id;
    record.status = RunStatus::Complete;
    record.finished = Some("2026-01-01T00:10:00Z".to_string());
    record.warnings = warnings;
    record.cases = vec![first, second];
    let loaded = store.load_run(id).unwrap();
    // A run stored without a UUID gets a new one.
    assert!(
        uuid::Uuid::try_parse(&loaded.uuid).is_ok(),
        "{}",
        loaded.uuid
    );
    record.uuid = loaded.uuid.clone();
    assert_eq!(loaded, record);

    // The histogram bytes are still a valid histogram.
    let bytes = loaded.cases[0].latency_histogram.as_ref().unwrap();
    let histogram: Histogram<u64> = Deserializer::new().deserialize(&mut &bytes[..]).unwrap();
    assert_eq!(histogram.len(), 5);
    assert_eq!(loaded.cases[1].latency_histogram, None);
}

#[test]
fn a_reopened_store_keeps_its_runs_and_is_marked_as_sledge() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let id = {
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.path(), path);
        store_run(&mut store, "quick", "2026-01-01T00:00:00Z", 2)
    };
    let store = Store::open(&path).unwrap();
    assert_eq!(store.load_run(id).unwrap().cases.len(), 2);

    let bytes = fs::read(&path).unwrap();
    assert_eq!(&bytes[..16], b"SQLite format 3\0");
    let app_id = u32::from_be_bytes(bytes[68..72].try_into().unwrap());
    assert_eq!(app_id, APPLICATION_ID);
    let user_version = u32::from_be_bytes(bytes[60..64].try_into().unwrap());
    assert_eq!(i64::from(user_version), SCHEMA_VERSION);
}

#[test]
fn open_refuses_a_missing_directory_and_creates_nothing() {
    // `--store /no/such/parent/x.db`: a typo must not grow a tree.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a").join("b").join("results.db");
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::NoDirectory { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "cannot create store {}: directory {} does not exist; create it first or choose another store location",
            path.display(),
            dir.path().join("a").join("b").display()
        )
    );
    assert!(!dir.path().join("a").exists());
}

#[test]
fn the_default_location_gets_its_directory_made_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a").join("b").join("results.db");
    let mut store = Store::open_making_dir(&path).unwrap();
    store_run(&mut store, "quick", "2026-01-01T00:00:00Z", 1);
    assert!(path.is_file());
    let mode = fs::metadata(dir.path().join("a").join("b"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700, "{mode:o}");
}

#[test]
fn a_read_only_open_of_a_missing_store_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let err = Store::open_existing(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "no runs yet: there is no store at {}; `sledge run` makes one",
            path.display()
        )
    );
    // A dangling symbolic link is no store either, and is left alone.
    let link = dir.path().join("link.db");
    std::os::unix::fs::symlink(dir.path().join("gone.db"), &link).unwrap();
    let err = Store::open_existing(&link).unwrap_err();
    assert!(matches!(err, StoreError::NoStore { .. }), "{err:?}");
    let mut left: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, vec![std::ffi::OsString::from("link.db")]);

    // An existing store opens as usual.
    store_run(
        &mut Store::open(&path).unwrap(),
        "quick",
        "2026-01-01T00:00:00Z",
        1,
    );
    assert_eq!(
        Store::open_existing(&path)
            .unwrap()
            .list_runs()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_damaged_store_is_found_by_the_integrity_check() {
    let (dir, mut store) = new_store();
    for i in 0..3 {
        store_run(
            &mut store,
            "quick",
            &format!("2026-01-0{}T00:00:00Z", i + 1),
            3,
        );
    }
    store.check_integrity().unwrap();
    drop(store);
    // Overwrite the page of the `sample` table's index with garbage: the
    // store still opens, lists and adds a run, but storing a sample (the
    // first case of a run) would fail.
    let path = dir.path().join("results.db");
    let page = {
        let conn = Connection::open(&path).unwrap();
        let page_size: i64 = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .unwrap();
        let root: i64 = conn
            .query_row(
                "SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_sample_1'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        (root - 1) * page_size..root * page_size
    };
    let mut bytes = fs::read(&path).unwrap();
    bytes[page.start as usize..page.end as usize].fill(0xff);
    fs::write(&path, &bytes).unwrap();

    let store = Store::open(&path).unwrap();
    assert_eq!(store.list_runs().unwrap().len(), 3);
    let err = store.check_integrity().unwrap_err();
    assert!(matches!(err, StoreError::Damaged { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("{} is damaged (", path.display())),
        "{text}"
    );
    assert!(
        text.ends_with("): move it away (sqlite3's `.recover` may save its runs) or choose another store location"),
        "{text}"
    );
    assert_eq!(
        fs::read(&path).unwrap(),
        bytes,
        "the check wrote to the file"
    );

    // Without the check, this is found only once a case has run.
    let mut store = store;
    let id = store
        .begin_run(&run("quick", "2026-01-04T00:00:00Z", "box"))
        .unwrap();
    let err = store.add_case(id, &small_case("cpu.late")).unwrap_err();
    assert!(matches!(err, StoreError::Damaged { .. }), "{err:?}");
}

/// What `main` prints for a store error: the whole chain, as `{:#}`.
fn printed(err: StoreError) -> String {
    format!("{:#}", anyhow::Error::from(err))
}

#[test]
fn store_errors_print_their_cause_once() {
    let path = PathBuf::from("/srv/x/results.db");
    let denied = || io::Error::from_raw_os_error(libc::EACCES);
    assert_eq!(
        printed(StoreError::CreateFile {
            path: path.clone(),
            cause: denied()
        }),
        "cannot create store file /srv/x/results.db: Permission denied (os error 13); make its directory writable or choose another store location"
    );
    assert_eq!(
        printed(StoreError::CreateDir {
            dir: PathBuf::from("/srv/x"),
            cause: denied()
        }),
        "cannot create store directory /srv/x: Permission denied (os error 13); check the path and its permissions, or choose another store location"
    );
    assert_eq!(
        printed(StoreError::Read {
            path: path.clone(),
            cause: denied()
        }),
        "cannot read store file /srv/x/results.db: Permission denied (os error 13)"
    );
    let locked = rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
        Some("database is locked".to_string()),
    );
    assert_eq!(
        printed(sql_err(&path, "storing a case")(locked)),
        "store /srv/x/results.db failed while storing a case: database is locked"
    );
    let malformed = rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
        Some("database disk image is malformed".to_string()),
    );
    assert_eq!(
        printed(sql_err(&path, "storing a case")(malformed)),
        "/srv/x/results.db is damaged (database disk image is malformed, while storing a case): move it away (sqlite3's `.recover` may save its runs) or choose another store location"
    );
}

#[test]
fn a_real_creation_failure_prints_its_cause_once() {
    // /sys refuses new files, for root too (EACCES, or EROFS where it is
    // mounted read-only).
    let path = Path::new("/sys/sledge-test-results.db");
    if !Path::new("/sys/kernel").is_dir() {
        crate::say!("skipped: no sysfs at /sys");
        return;
    }
    let text = printed(Store::open(path).unwrap_err());
    let prefix = "cannot create store file /sys/sledge-test-results.db: ";
    let suffix = "; make its directory writable or choose another store location";
    assert!(text.starts_with(prefix) && text.ends_with(suffix), "{text}");
    assert_eq!(text.matches("(os error").count(), 1, "{text}");
}

#[test]
fn sledges_opening_a_new_store_at_once_all_get_it() {
    // Two sledge commands started together (a run and a `list`) both
    // create or inspect the same new file; each must see either nothing or
    // the finished store, never half of one.
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        let start = std::sync::Barrier::new(6);
        let results: Vec<Result<(), String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..6)
                .map(|_| {
                    scope.spawn(|| {
                        start.wait();
                        Store::open(&path).map(drop).map_err(|e| e.to_string())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for result in results {
            assert_eq!(result, Ok(()), "round {round}");
        }
    }
}

#[test]
fn an_empty_file_becomes_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    fs::write(&path, b"").unwrap();
    let mut store = Store::open(&path).unwrap();
    store_run(&mut store, "quick", "2026-01-01T00:00:00Z", 1);
    assert_eq!(store.list_runs().unwrap().len(), 1);
}

#[test]
fn list_runs_is_newest_first_with_case_counts() {
    let (_dir, mut store) = new_store();
    assert!(store.list_runs().unwrap().is_empty());
    let a = store_run(&mut store, "quick", "2026-01-01T00:00:00Z", 2);
    let b = store_run(&mut store, "full", "2026-01-02T00:00:00Z", 0);
    let c = store
        .begin_run(&run("cpu", "2026-01-03T00:00:00Z", "other"))
        .unwrap();
    store.add_case(c, &full_case()).unwrap();

    let listing = store.list_runs().unwrap();
    let summary: Vec<(i64, &str, u32, RunStatus)> = listing
        .iter()
        .map(|r| (r.id, r.profile.as_str(), r.cases, r.status))
        .collect();
    assert_eq!(
        summary,
        vec![
            (c, "cpu", 1, RunStatus::Running),
            (b, "full", 0, RunStatus::Complete),
            (a, "quick", 2, RunStatus::Complete),
        ]
    );
    assert_eq!(
        listing[0],
        RunListing {
            id: c,
            uuid: store.load_run(c).unwrap().uuid,
            started: "2026-01-03T00:00:00Z".to_string(),
            finished: None,
            profile: "cpu".to_string(),
            status: RunStatus::Running,
            hostname: hostname_of(&host("other")),
            fleet_host: None,
            cases: 1,
            sledge_version: "0.1.0".to_string(),
        }
    );
    assert_eq!(listing[1].finished.as_deref(), Some("2026-01-01T01:00:00Z"));
}

#[test]
fn list_runs_names_the_fleet_host_of_a_fleet_run() {
    let (_dir, mut store) = new_store();
    let mut clone = run("quick", "2026-01-01T00:00:00Z", "vm");
    clone.notes = vec!["rack 3".into(), "fleet_host=198.18.1.2:2222".into()];
    store.begin_run(&clone).unwrap();
    store
        .begin_run(&run("quick", "2026-01-02T00:00:00Z", "vm"))
        .unwrap();
    let listing = store.list_runs().unwrap();
    let hosts: Vec<(&str, Option<&str>)> = listing
        .iter()
        .map(|r| (r.hostname.as_str(), r.fleet_host.as_deref()))
        .collect();
    let vm = hostname_of(&host("vm"));
    assert_eq!(
        hosts,
        [(vm.as_str(), None), (vm.as_str(), Some("198.18.1.2:2222"))]
    );
}

#[test]
fn resolve_run_accepts_ids_last_and_last_tilde_n() {
    let (_dir, mut store) = new_store();
    let a = store_run(&mut store, "quick", "2026-01-01T00:00:00Z", 0);
    let b = store_run(&mut store, "quick", "2026-01-02T00:00:00Z", 0);
    let c = store_run(&mut store, "quick", "2026-01-03T00:00:00Z", 0);

    assert_eq!(store.resolve_run(&b.to_string()).unwrap(), b);
    assert_eq!(store.resolve_run(&format!(" {a} ")).unwrap(), a);
    assert_eq!(store.resolve_run("last").unwrap(), c);
    assert_eq!(store.resolve_run("latest").unwrap(), c);
    assert_eq!(store.resolve_run("LAST").unwrap(), c);
    assert_eq!(store.resolve_run("last~0").unwrap(), c);
    assert_eq!(store.resolve_run("last~1").unwrap(), b);
    assert_eq!(store.resolve_run("latest~2").unwrap(), a);
}

#[test]
fn a_uuid_prefix_of_decimal_digits_names_its_run_when_no_id_matches() {
    let (_dir, mut store) = new_store();
    // A finished run with this UUID, started on this day of January.
    let store_uuid = |store: &mut Store, uuid: &str, day: u32| {
        let mut record = run("quick", &format!("2026-01-{day:02}T00:00:00Z"), "box");
        record.uuid = uuid.into();
        let id = store.begin_run(&record).unwrap();
        let finished = format!("2026-01-{day:02}T01:00:00Z");
        store
            .finish_run(id, RunStatus::Complete, &finished, &[])
            .unwrap();
        id
    };
    let id = store_uuid(&mut store, "52314352-9c1e-4b7a-8f00-0123456789ab", 1);
    assert_eq!(store.resolve_run("52314352").unwrap(), id);
    // An id still names its run, and a number shorter than a UUID prefix
    // that names none stays a missing id.
    assert_eq!(store.resolve_run(&id.to_string()).unwrap(), id);
    let err = store.resolve_run("5231435").unwrap_err();
    assert!(
        matches!(err, StoreError::NoSuchRun { id: 5231435, .. }),
        "{err:?}"
    );
    let err = store.resolve_run("52314353").unwrap_err();
    assert!(
        matches!(err, StoreError::NoSuchRun { id: 52314353, .. }),
        "{err:?}"
    );
    // Two runs whose UUIDs start with the same decimal digits: the prefix
    // is ambiguous, not a missing id.
    let twin_id = store_uuid(&mut store, "52314352-0000-4b7a-8f00-0123456789ab", 2);
    let err = store.resolve_run("52314352").unwrap_err();
    assert!(matches!(err, StoreError::AmbiguousUuid { .. }), "{err:?}");
    assert!(err.to_string().contains("give more of the UUID"), "{err}");
    assert_eq!(store.resolve_run("52314352-0").unwrap(), twin_id);
}

#[test]
fn a_case_is_stored_after_another_process_held_the_lock_for_several_seconds() {
    let (dir, mut store) = new_store();
    let id = store
        .begin_run(&run("quick", "2026-01-01T00:00:00Z", "box"))
        .unwrap();
    // Another connection (as another process would) takes the write lock
    // and holds it for six seconds: longer than SQLite's usual few, far
    // shorter than the store's wait.
    let other = rusqlite::Connection::open(dir.path().join("results.db")).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let holder = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(6));
        other.execute_batch("COMMIT").unwrap();
    });
    let stored = store.add_case(id, &small_case("cpu.primes"));
    holder.join().unwrap();
    stored.unwrap();
    store
        .finish_run(id, RunStatus::Complete, "2026-01-01T01:00:00Z", &[])
        .unwrap();
    assert_eq!(store.load_run(id).unwrap().cases.len(), 1);
}

#[test]
fn a_reference_that_is_an_id_and_another_runs_uuid_prefix_is_ambiguous() {
    let (_dir, mut store) = new_store();
    let first = store_run(&mut store, "quick", "2026-01-01T00:00:00Z", 0);
    let second = store_run(&mut store, "quick", "2026-01-02T00:00:00Z", 0);
    // The third run's UUID starts with what `list` would show as
    // `00000002`, which also parses as the second run's id.
    let mut record = run("quick", "2026-01-03T00:00:00Z", "box");
    record.uuid = "00000002-9c1e-4b7a-8f00-0123456789ab".into();
    let third = store.begin_run(&record).unwrap();
    assert_eq!((first, second, third), (1, 2, 3));

    let err = store.resolve_run("00000002").unwrap_err();
    assert!(matches!(err, StoreError::AmbiguousRunRef { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("the id of run 2"), "{text}");
    assert!(
        text.contains("run 3 (00000002-9c1e-4b7a-8f00-0123456789ab)"),
        "{text}"
    );
    assert!(text.contains("name run 2 as `2`"), "{text}");
    // Each run can still be named without ambiguity.
    assert_eq!(store.resolve_run("2").unwrap(), 2);
    assert_eq!(store.resolve_run("00000002-9").unwrap(), 3);
    // An id with leading zeros that starts no UUID stays a plain id.
    assert_eq!(store.resolve_run("00000001").unwrap(), 1);
    // A run whose own UUID starts with its id is not ambiguous.
    let mut record = run("quick", "2026-01-04T00:00:00Z", "box");
    record.uuid = "00000004-9c1e-4b7a-8f00-0123456789ab".into();
    assert_eq!(store.begin_run(&record).unwrap(), 4);
    assert_eq!(store.resolve_run("00000004").unwrap(), 4);
    // Several UUIDs starting with an id: ambiguous as well.
    let mut record = run("quick", "2026-01-05T00:00:00Z", "box");
    record.uuid = "00000002-0000-4b7a-8f00-0123456789ab".into();
    store.begin_run(&record).unwrap();
    let err = store.resolve_run("00000002").unwrap_err();
    assert!(err.to_string().contains("several runs"), "{err}");
}

#[test]
fn resolve_run_errors_are_clear() {
    let (_dir, mut store) = new_store();
    let path = store.path().display().to_string();

    let err = store.resolve_run("last").unwrap_err();
    assert!(
        matches!(err, StoreError::NoRunAt { count: 0, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains(&path), "{err}");

    store_run(&mut store, "quick", "2026-01-01T00:00:00Z", 0);
    store_run(&mut store, "quick", "2026-01-02T00:00:00Z", 0);

    let err = store.resolve_run("last~2").unwrap_err();
    assert!(
        matches!(err, StoreError::NoRunAt { count: 2, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("last~2"), "{err}");

    let err = store.resolve_run("99").unwrap_err();
    assert!(
        matches!(err, StoreError::NoSuchRun { id: 99, .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!("no run 99 in {path}; `sledge list` shows the stored runs")
    );

    for garbage in [
        "yesterday",
        "last~",
        "last~x",
        "last~-1",
        "last~1~2",
        "",
        "1.5",
    ] {
        let err = store.resolve_run(garbage).unwrap_err();
        assert!(
            matches!(err, StoreError::BadRunRef { .. }),
            "{garbage}: {err:?}"
        );
        let text = err.to_string();
        assert!(text.contains("is not a run reference"), "{text}");
        assert!(text.contains("last~N"), "{text}");
        assert!(text.contains(&path), "{text}");
    }
}

#[test]
fn finish_run_updates_status_time_and_warnings() {
    let (_dir, mut store) = new_store();
    let id = store
        .begin_run(&run("quick", "2026-01-01T00:00:00Z", "box"))
        .unwrap();
    let loaded = store.load_run(id).unwrap();
    assert_eq!(loaded.status, RunStatus::Running);
    assert_eq!(loaded.finished, None);

    store
        .finish_run(
            id,
            RunStatus::Failed,
            "2026-01-01T00:05:00Z",
            &["boom".to_string()],
        )
        .unwrap();
    let loaded = store.load_run(id).unwrap();
    assert_eq!(loaded.status, RunStatus::Failed);
    assert_eq!(loaded.finished.as_deref(), Some("2026-01-01T00:05:00Z"));
    assert_eq!(loaded.warnings, vec!["boom".to_string()]);
    assert_eq!(store.list_runs().unwrap()[0].status, RunStatus::Failed);

    let err = store
        .finish_run(id + 1, RunStatus::Complete, "2026-01-01T00:05:00Z", &[])
        .unwrap_err();
    assert!(matches!(err, StoreError::NoSuchRun { .. }), "{err:?}");
}

#[test]
fn a_partial_run_loads_with_its_finished_case() {
    let (_dir, mut store) = new_store();
    let id = store
        .begin_run(&run("full", "2026-01-01T00:00:00Z", "box"))
        .unwrap();
    let case = full_case();
    store.add_case(id, &case).unwrap();
    store
        .finish_run(id, RunStatus::Partial, "2026-01-01T00:01:00Z", &[])
        .unwrap();

    let loaded = store.load_run(id).unwrap();
    assert_eq!(loaded.status, RunStatus::Partial);
    assert_eq!(loaded.cases, vec![case]);
    assert!(loaded.warnings.is_empty());
}

#[test]
fn load_run_of_an_unknown_id_names_the_store() {
    let (_dir, store) = new_store();
    let err = store.load_run(7).unwrap_err();
    assert!(
        matches!(err, StoreError::NoSuchRun { id: 7, .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "no run 7 in {}; `sledge list` shows the stored runs",
            store.path().display()
        )
    );
}

#[test]
fn add_case_to_an_unknown_run_is_refused() {
    let (_dir, mut store) = new_store();
    let err = store.add_case(3, &small_case("cpu.primes")).unwrap_err();
    assert!(
        matches!(err, StoreError::NoSuchRun { id: 3, .. }),
        "{err:?}"
    );
}

#[test]
fn an_invalid_case_stores_nothing() {
    let (_dir, mut store) = new_store();
    let id = store
        .begin_run(&run("quick", "2026-01-01T00:00:00Z", "box"))
        .unwrap();

    let mut case = full_case();
    case.metrics[0].outliers.push(true);
    let err = store.add_case(id, &case).unwrap_err();
    assert!(matches!(err, StoreError::InvalidRecord { .. }), "{err:?}");
    assert!(err.to_string().contains("net.echo"), "{err}");

    let mut case = full_case();
    case.trials[2].index = 1;
    let err = store.add_case(id, &case).unwrap_err();
    assert!(matches!(err, StoreError::InvalidRecord { .. }), "{err:?}");

    assert!(store.load_run(id).unwrap().cases.is_empty());
    assert_eq!(store.list_runs().unwrap()[0].cases, 0);
}

#[test]
fn non_finite_and_missing_values_survive() {
    let (_dir, mut store) = new_store();
    let id = store
        .begin_run(&run("quick", "2026-01-01T00:00:00Z", "box"))
        .unwrap();
    let mut case = small_case("cpu.primes");
    case.metrics[0].summary.stddev = f64::NAN;
    case.metrics[0].summary.ci_low = f64::NEG_INFINITY;
    case.metrics[0].summary.ci_high = f64::INFINITY;
    // Fewer outlier flags than samples: the missing ones stay missing.
    case.metrics[0].samples.push(43.0);
    case.metrics[0].outliers.clear();
    case.latency_histogram = Some(Vec::new());
    store.add_case(id, &case).unwrap();

    let loaded = store.load_run(id).unwrap();
    let metric = &loaded.cases[0].metrics[0];
    assert!(metric.summary.stddev.is_nan());
    assert_eq!(metric.summary.ci_low, f64::NEG_INFINITY);
    assert_eq!(metric.summary.ci_high, f64::INFINITY);
    assert_eq!(metric.samples, vec![42.0, 43.0]);
    assert!(metric.outliers.is_empty());
    assert_eq!(loaded.cases[0].latency_histogram, Some(Vec::new()));
}

#[test]
fn json_with_nulls_from_nan_still_loads() {
    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    #[serde(default)]
    struct Health {
        steal: f64,
        flags: Vec<String>,
        inner: Option<Box<Health>>,
    }
    impl Default for Health {
        fn default() -> Self {
            Health {
                steal: 7.0,
                flags: Vec::new(),
                inner: None,
            }
        }
    }
    let nan = Health {
        steal: f64::NAN,
        flags: vec!["steal".to_string()],
        inner: Some(Box::new(Health {
            steal: f64::NAN,
            flags: Vec::new(),
            inner: None,
        })),
    };
    let text = serde_json::to_string(&nan).unwrap();
    assert!(text.contains("null"));
    let back: Health = read::from_json(Path::new("/x.db"), &text, || "health".into()).unwrap();
    assert_eq!(back.steal, 7.0);
    assert_eq!(back.flags, vec!["steal".to_string()]);
    assert_eq!(back.inner.unwrap().steal, 7.0);

    let err =
        read::from_json::<Health>(Path::new("/x.db"), "{not json", || "health".into()).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains("/x.db"), "{err}");
}

#[test]
fn two_handles_on_one_store_see_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let mut writer = Store::open(&path).unwrap();
    let reader = Store::open(&path).unwrap();
    let id = writer
        .begin_run(&run("quick", "2026-01-01T00:00:00Z", "box"))
        .unwrap();
    writer.add_case(id, &full_case()).unwrap();
    assert_eq!(reader.list_runs().unwrap()[0].cases, 1);
    assert_eq!(reader.load_run(id).unwrap().cases[0], full_case());
}

#[test]
fn a_file_in_the_way_of_the_directory_is_named_in_the_error() {
    // A regular file where a directory should be: fails for root too.
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    fs::write(&blocker, b"x").unwrap();
    let path = blocker.join("sledge").join("results.db");

    let expected = format!(
        "cannot create store {}: {} is not a directory; choose another store location",
        path.display(),
        blocker.display()
    );
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::NotADirectory { .. }), "{err:?}");
    assert_eq!(printed(err), expected);
    // The default location is refused the same way.
    assert_eq!(
        printed(Store::open_making_dir(&path).unwrap_err()),
        expected
    );
    assert_eq!(fs::read(&blocker).unwrap(), b"x");
}

#[test]
fn a_directory_that_cannot_be_made_prints_its_cause_once() {
    // sysfs refuses new directories, for root too.
    if !Path::new("/sys/kernel").is_dir() {
        crate::say!("skipped: no sysfs at /sys");
        return;
    }
    let path = Path::new("/sys/sledge-test/results.db");
    let text = printed(Store::open_making_dir(path).unwrap_err());
    let prefix = "cannot create store directory /sys/sledge-test: ";
    let suffix = "; check the path and its permissions, or choose another store location";
    assert!(text.starts_with(prefix) && text.ends_with(suffix), "{text}");
    assert_eq!(text.matches("(os error").count(), 1, "{text}");
}

#[test]
fn a_store_path_that_is_a_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = Store::open(dir.path()).unwrap_err();
    assert!(matches!(err, StoreError::NotSqlite { .. }), "{err:?}");
    assert!(err.to_string().contains("directory"), "{err}");
}

#[test]
fn a_text_file_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let text = b"these are my notes, not a database\n".repeat(10);
    fs::write(&path, &text).unwrap();

    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::NotSqlite { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("is not an SQLite database"), "{message}");
    assert_eq!(fs::read(&path).unwrap(), text);
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no journal left"
    );

    // Shorter than a header, but starting like one.
    fs::write(&path, b"SQLite format 3\0abc").unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::NotSqlite { .. }), "{err:?}");
    assert_eq!(fs::read(&path).unwrap(), b"SQLite format 3\0abc");
}

/// Makes an SQLite database with one table and the given application id.
fn foreign_database(path: &Path, application_id: Option<i32>) -> Vec<u8> {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);
         INSERT INTO notes (body) VALUES ('keep me');",
    )
    .unwrap();
    if let Some(id) = application_id {
        conn.pragma_update(None, "application_id", id).unwrap();
    }
    drop(conn);
    fs::read(path).unwrap()
}

fn assert_refused_as_foreign(path: &PathBuf, before: &[u8]) {
    let err = Store::open(path).unwrap_err();
    assert!(matches!(err, StoreError::Foreign { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("not a sledge database"), "{message}");
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert_eq!(fs::read(path).unwrap(), before);
}

#[test]
fn a_foreign_sqlite_database_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let before = foreign_database(&path, None);
    assert_refused_as_foreign(&path, &before);
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no journal left"
    );

    let other = dir.path().join("other.db");
    let before = foreign_database(&other, Some(0x1234_5678));
    assert_refused_as_foreign(&other, &before);
}

#[test]
fn a_store_from_a_newer_sledge_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    drop(Store::open(&path).unwrap());
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
    }
    let before = fs::read(&path).unwrap();

    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::TooNew { found, .. } if found == SCHEMA_VERSION + 1),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("made by a newer sledge"), "{message}");
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert_eq!(fs::read(&path).unwrap(), before);
}

#[test]
fn default_path_follows_xdg() {
    assert_eq!(
        default_path_from(Some("/data".into()), Some("/home/u".into())),
        PathBuf::from("/data/sledge/results.db")
    );
    assert_eq!(
        default_path_from(None, Some("/home/u".into())),
        PathBuf::from("/home/u/.local/share/sledge/results.db")
    );
    // Relative and empty XDG_DATA_HOME are ignored.
    assert_eq!(
        default_path_from(Some("rel".into()), Some("/home/u".into())),
        PathBuf::from("/home/u/.local/share/sledge/results.db")
    );
    assert_eq!(
        default_path_from(Some("".into()), Some("/home/u".into())),
        PathBuf::from("/home/u/.local/share/sledge/results.db")
    );
    assert_eq!(
        default_path_from(None, None),
        PathBuf::from("sledge-results.db")
    );
    assert!(
        Store::default_path().ends_with("sledge/results.db")
            || Store::default_path().ends_with("sledge-results.db")
    );
}

#[test]
fn migrations_are_sequential_and_complete() {
    assert_eq!(SCHEMA_VERSION, schema::MIGRATIONS.len() as i64);
    let (_dir, store) = new_store();
    for table in ["run", "run_case", "trial", "metric", "sample", "histogram"] {
        let count: i64 = store
            .conn
            .sqlite()
            .unwrap()
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1",
                [table],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(count, 1, "table {table}");
    }
    let foreign_keys: bool = store
        .conn
        .sqlite()
        .unwrap()
        .pragma_query_value(None, "foreign_keys", |row| row.get(0))
        .unwrap();
    assert!(foreign_keys);
    let journal: String = store
        .conn
        .sqlite()
        .unwrap()
        .pragma_query_value(None, "journal_mode", |row| row.get(0))
        .unwrap();
    assert_eq!(journal, "delete");
}

#[test]
fn the_hostname_is_found_in_the_inventory() {
    let find = |value| write::find_hostname(&value).map(str::to_string);
    assert_eq!(
        find(json!({ "hostname": "a", "os": { "hostname": "b" } })),
        Some("a".into())
    );
    assert_eq!(
        find(json!({ "os": { "kernel": "6.1" }, "net": { "hostname": "b" } })),
        Some("b".into())
    );
    assert_eq!(find(json!({ "hostname": 3 })), None);
    assert_eq!(find(json!(null)), None);
}

/// A host named `name` with a CPU model and kernel, for host keys.
fn keyed_host(name: &str, kernel: &str) -> HostInfo {
    serde_json::from_value(json!({
        "hostname": name,
        "cpu": { "model": "Test CPU 9000" },
        "os": { "kernel": kernel },
    }))
    .unwrap()
}

#[test]
fn a_store_from_before_rounds_is_migrated_and_keyed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        // The schema of version 1 with one run and one case, as an older
        // sledge wrote it.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(schema::MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID as i32)
            .unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        let host = serde_json::to_string(&keyed_host("db1", "6.1.0")).unwrap();
        conn.execute(
            "INSERT INTO run (started, sledge_version, profile, command_line, status, cpus,
                              hostname, host)
             VALUES ('2026-01-01T00:00:00Z', '0.1.0', 'quick', 'sledge run', 'complete',
                     '[0,1]', 'db1', ?1)",
            [host],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO run_case (run_id, workload, workload_version, params)
             VALUES (1, 'cpu.primes', 1, '{}')",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO trial (case_id, idx, seconds, health) VALUES (1, 0, 0.5, '{}')",
            [],
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    let run = store.load_run(1).unwrap();
    assert!(run.notes.is_empty());
    assert_eq!(run.cases[0].trials[0].round, 0);
    assert!(!run.cases[0].trials[0].replaced);
    assert!(run.cases[0].rounds.is_empty());
    let key: String = store
        .conn
        .sqlite()
        .unwrap()
        .query_row("SELECT host_key FROM run WHERE id = 1", [], |row| {
            row.get(0)
        })
        .unwrap();
    assert_eq!(key, run.host_key());
    assert_eq!(key, "db1|Test CPU 9000|2|6.1.0");
}

#[test]
fn a_case_saved_again_replaces_its_trials_and_keeps_its_place() {
    let (_dir, mut store) = new_store();
    let run_id = store
        .begin_run(&run("quick", "2026-01-01T00:00:00Z", "h"))
        .unwrap();
    let mut first = small_case("b.second");
    first.error = None;
    // Saved in the order the shuffled first round ran them: position 1
    // before position 0.
    let id_b = store.save_case(run_id, Some(1), None, &first).unwrap();
    let id_a = store
        .save_case(run_id, Some(0), None, &small_case("a.first"))
        .unwrap();
    let mut grown = full_case();
    grown.workload = "b.second".to_string();
    assert_eq!(
        store
            .save_case(run_id, Some(1), Some(id_b), &grown)
            .unwrap(),
        id_b
    );
    let loaded = store.load_run(run_id).unwrap();
    assert_eq!(loaded.cases.len(), 2);
    assert_eq!(loaded.cases[0].workload, "a.first");
    assert_eq!(loaded.cases[1], grown);
    // Updating a case of another run is refused and changes nothing.
    let other = store
        .begin_run(&run("quick", "2026-01-02T00:00:00Z", "h"))
        .unwrap();
    assert!(store.save_case(other, Some(0), Some(id_a), &grown).is_err());
    assert_eq!(store.load_run(run_id).unwrap().cases[0].workload, "a.first");
}

#[test]
fn a_case_history_is_this_hosts_runs_of_the_same_case_oldest_first() {
    let (_dir, mut store) = new_store();
    let mut ids = Vec::new();
    // Runs 1, 2 and 4 on host a, run 3 on host b, run 5 on host a with
    // another kernel; the case fails in run 2.
    for (i, (name, kernel, fails)) in [
        ("a", "6.1", false),
        ("a", "6.1", true),
        ("b", "6.1", false),
        ("a", "6.1", false),
        ("a", "6.2", false),
    ]
    .into_iter()
    .enumerate()
    {
        let mut r = run("quick", &format!("2026-01-0{}T00:00:00Z", i + 1), name);
        r.host = keyed_host(name, kernel);
        let id = store.begin_run(&r).unwrap();
        let mut case = full_case();
        case.metrics[0].summary.mean = 100.0 + i as f64;
        if fails {
            case.error = Some("boom".into());
        }
        if i == 3 {
            // Run 4's trials were all undisturbed.
            for trial in &mut case.trials {
                trial.health.flags.clear();
            }
        }
        store.add_case(id, &case).unwrap();
        ids.push((id, r));
    }
    let (_, a) = &ids[0];
    let case = full_case();
    let history = store
        .case_history(
            &a.host_key(),
            &case.workload,
            case.workload_version,
            &case.params,
            &[],
            &[],
        )
        .unwrap();
    let runs: Vec<i64> = history.iter().map(|h| h.run_id).collect();
    assert_eq!(runs, vec![ids[0].0, ids[3].0]);
    assert_eq!(history[1].metrics[0].name, "ops_per_sec");
    assert_eq!(history[1].metrics[0].mean, 103.0);
    assert_eq!(history[0].metrics[0].levels, case.metrics[0].levels);
    assert_eq!(history[0].rounds, case.rounds);
    assert_eq!(history[0].used_trials, 2);
    // Run 1 used a throttled trial (its replaced steal trial does not
    // count); run 4 used none.
    assert!(history[0].disturbed);
    assert!(!history[1].disturbed);
    assert!((history[0].mean_trial_seconds - 1.875).abs() < 1e-12);
    // Excluded runs and other parameters are left out.
    let without = store
        .case_history(
            &a.host_key(),
            &case.workload,
            case.workload_version,
            &case.params,
            &[],
            &[ids[0].0],
        )
        .unwrap();
    assert_eq!(without.len(), 1);
    let mut other_params = case.params.clone();
    other_params.insert("size".into(), "1".into());
    assert!(
        store
            .case_history(&a.host_key(), &case.workload, 3, &other_params, &[], &[])
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_case_history_counts_runs_from_before_a_later_parameter_at_its_default() {
    let (_dir, mut store) = new_store();
    // What the HTTP workloads say of the parameter (`Workload::later_params`).
    const CLIENTS_FROM: &[crate::store::later_params::LaterParam] =
        &[crate::store::later_params::LaterParam {
            name: "clients_from",
            default: "local",
        }];
    let mut runs = Vec::new();
    // Before `clients_from` existed, after it at its default, and with
    // client hosts: the first two are one case.
    for (i, clients_from) in [None, Some("local"), Some("root@h1")]
        .into_iter()
        .enumerate()
    {
        let r = run("quick", &format!("2026-01-0{}T00:00:00Z", i + 1), "a");
        let id = store.begin_run(&r).unwrap();
        let mut case = full_case();
        case.workload = "http.static".into();
        if let Some(v) = clients_from {
            case.params.insert("clients_from".into(), v.into());
        }
        store.add_case(id, &case).unwrap();
        runs.push((id, r, case));
    }
    let history = |case: &CaseRecord| -> Vec<i64> {
        store
            .case_history(
                &runs[0].1.host_key(),
                &case.workload,
                case.workload_version,
                &case.params,
                CLIENTS_FROM,
                &[],
            )
            .unwrap()
            .iter()
            .map(|h| h.run_id)
            .collect()
    };
    let (old, new) = (&runs[0].2, &runs[1].2);
    assert_eq!(history(old), vec![runs[0].0, runs[1].0]);
    assert_eq!(history(new), vec![runs[0].0, runs[1].0]);
    assert_eq!(history(&runs[2].2), vec![runs[2].0]);
}

#[test]
fn imported_runs_are_no_history_and_fleet_runs_are() {
    let (_dir, mut store) = new_store();
    let case = full_case();
    let local = run("quick", "2026-01-01T00:00:00Z", "a");
    let host_key = local.host_key();
    let local_id = store.begin_run(&local).unwrap();
    store.add_case(local_id, &case).unwrap();
    let mut imported = exported_run(UUID_A, "a");
    imported.cases = vec![case.clone()];
    let imported_id = match store.import_runs(&[imported]).unwrap()[..] {
        [Imported::Added { id, .. }] => id,
        ref other => panic!("{other:?}"),
    };
    let mut landed = exported_run(UUID_B, "a");
    landed.cases = vec![case.clone()];
    let landed_id = match store.land_fleet_runs(&[landed]).unwrap()[..] {
        [Imported::Added { id, .. }] => id,
        ref other => panic!("{other:?}"),
    };
    assert_eq!(
        store.load_run(imported_id).unwrap().cases,
        vec![case.clone()]
    );
    let history: Vec<i64> = store
        .case_history(
            &host_key,
            &case.workload,
            case.workload_version,
            &case.params,
            &[],
            &[],
        )
        .unwrap()
        .iter()
        .map(|h| h.run_id)
        .collect();
    assert_eq!(history, vec![local_id, landed_id]);
}

#[test]
fn runs_without_an_owner_from_before_version_6_are_taken_as_imported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v5.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        for step in &schema::MIGRATIONS[..5] {
            conn.execute_batch(step).unwrap();
        }
        conn.pragma_update(None, "application_id", APPLICATION_ID as i32)
            .unwrap();
        conn.pragma_update(None, "user_version", 5).unwrap();
        // Run 1 was made here (its process recorded), run 2 imported.
        for (uuid, owner) in [(UUID_A, Some("boot:1:2")), (UUID_B, None)] {
            conn.execute(
                "INSERT INTO run (started, sledge_version, profile, command_line, status, uuid,
                                  owner, host_key)
                 VALUES ('2026-01-01T00:00:00Z', '0.1.0', 'quick', 'sledge run', 'complete',
                         ?1, ?2, 'h')",
                rusqlite::params![uuid, owner],
            )
            .unwrap();
        }
        for run_id in [1, 2] {
            conn.execute(
                "INSERT INTO run_case (run_id, workload, workload_version, params)
                 VALUES (?1, 'cpu.primes', 1, '{\"threads\":\"2\"}')",
                [run_id],
            )
            .unwrap();
        }
    }
    let store = Store::open(&path).unwrap();
    let params = BTreeMap::from([("threads".to_string(), "2".to_string())]);
    let history: Vec<i64> = store
        .case_history("h", "cpu.primes", 1, &params, &[], &[])
        .unwrap()
        .iter()
        .map(|h| h.run_id)
        .collect();
    assert_eq!(history, vec![1]);
    // Their cases did not record which parameters were `all`.
    assert_eq!(store.load_run(1).unwrap().cases[0].given_as_all, None);
}

/// The run with id `id`, as `import_runs` would get it from an export:
/// finished, with a UUID and both kinds of case.
fn exported_run(uuid: &str, hostname: &str) -> RunRecord {
    let mut record = run("quick", "2026-02-01T00:00:00Z", hostname);
    record.id = 77;
    record.uuid = uuid.to_string();
    record.status = RunStatus::Complete;
    record.finished = Some("2026-02-01T00:05:00Z".to_string());
    record.cases = vec![full_case(), small_case("memory.block")];
    record
}

const UUID_A: &str = "6f1c1c3e-2b4d-4c55-9a77-0d7e8f9a0b1c";
const UUID_B: &str = "6f1c1c3e-9999-4c55-9a77-0d7e8f9a0b1c";

#[test]
fn a_store_from_before_uuids_gives_every_run_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    {
        // A version 1 store with two runs, as the previous sledge made it.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(schema::MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID as i32)
            .unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        for started in ["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"] {
            conn.execute(
                "INSERT INTO run (started, sledge_version, profile, command_line, status)
                 VALUES (?1, '0.1.0', 'quick', 'sledge run', 'complete')",
                [started],
            )
            .unwrap();
        }
    }
    let store = Store::open(&path).unwrap();
    let uuids: Vec<String> = store
        .list_runs()
        .unwrap()
        .into_iter()
        .map(|r| r.uuid)
        .collect();
    assert_eq!(uuids.len(), 2);
    assert_ne!(uuids[0], uuids[1]);
    for uuid in &uuids {
        let parsed = uuid::Uuid::try_parse(uuid).unwrap_or_else(|e| panic!("{uuid}: {e}"));
        assert_eq!(parsed.get_version_num(), 4, "{uuid}");
        assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122, "{uuid}");
        assert_eq!(&parsed.to_string(), uuid, "canonical form");
    }
    // A third run gets its own; the schema is current.
    let mut store = store;
    let id = store
        .begin_run(&run("quick", "2026-01-03T00:00:00Z", "box"))
        .unwrap();
    assert!(!uuids.contains(&store.load_run(id).unwrap().uuid));
    assert_eq!(
        schema::user_version(store.conn.sqlite().unwrap()).unwrap(),
        SCHEMA_VERSION
    );
}

#[test]
fn imported_runs_keep_everything_but_their_id_and_come_once() {
    let (_dir, mut store) = new_store();
    let local = store_run(&mut store, "quick", "2026-01-01T00:00:00Z", 1);
    let record = exported_run(UUID_A, "far-away");

    let outcome = store.import_runs(std::slice::from_ref(&record)).unwrap();
    let [Imported::Added { id, uuid }] = outcome.as_slice() else {
        panic!("{outcome:?}");
    };
    assert_eq!(uuid, UUID_A);
    assert_ne!(*id, local);
    let mut loaded = store.load_run(*id).unwrap();
    assert_eq!(loaded.id, *id);
    loaded.id = record.id;
    assert_eq!(
        loaded, record,
        "everything but the id survives, histogram included"
    );

    // Again, and twice within one document: nothing is added.
    let again = store
        .import_runs(&[record.clone(), record.clone()])
        .unwrap();
    assert_eq!(
        again,
        vec![
            Imported::AlreadyStored {
                id: *id,
                uuid: UUID_A.into()
            },
            Imported::AlreadyStored {
                id: *id,
                uuid: UUID_A.into()
            },
        ]
    );
    assert_eq!(store.list_runs().unwrap().len(), 2);
    assert_eq!(store.find_uuid(UUID_A).unwrap(), Some(*id));
    assert_eq!(store.find_uuid(UUID_B).unwrap(), None);
}

#[test]
fn a_document_with_one_bad_run_stores_none_of_its_runs() {
    let (_dir, mut store) = new_store();
    let good = exported_run(UUID_A, "a");
    let mut bad = exported_run(UUID_B, "b");
    bad.cases[0].trials[2].index = 0; // indexes must increase
    let err = store.import_runs(&[good, bad]).unwrap_err();
    assert!(
        err.to_string().contains("trial indexes must increase"),
        "{err}"
    );
    assert!(store.list_runs().unwrap().is_empty());

    let mut no_uuid = exported_run("not-a-uuid", "c");
    no_uuid.cases.clear();
    let err = store.import_runs(&[no_uuid]).unwrap_err();
    assert!(
        err.to_string().contains("`not-a-uuid` is not a UUID"),
        "{err}"
    );
    assert!(store.list_runs().unwrap().is_empty());
}

#[test]
fn runs_are_found_by_uuid_or_a_unique_prefix() {
    let (_dir, mut store) = new_store();
    let outcome = store
        .import_runs(&[exported_run(UUID_A, "a"), exported_run(UUID_B, "b")])
        .unwrap();
    let ids: Vec<i64> = outcome
        .iter()
        .map(|o| match o {
            Imported::Added { id, .. } => *id,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(store.resolve_run(UUID_A).unwrap(), ids[0]);
    assert_eq!(store.resolve_run(&UUID_B.to_uppercase()).unwrap(), ids[1]);
    assert_eq!(store.resolve_run("6f1c1c3e-2b4d").unwrap(), ids[0]);
    let ambiguous = store.resolve_run("6f1c1c3e").unwrap_err();
    assert!(
        matches!(ambiguous, StoreError::AmbiguousUuid { .. }),
        "{ambiguous}"
    );
    let missing = store.resolve_run("deadbeef").unwrap_err();
    assert!(
        matches!(missing, StoreError::NoSuchUuid { .. }),
        "{missing}"
    );
    assert!(missing.to_string().contains("deadbeef"), "{missing}");
    // Too short to be a UUID prefix: an ordinary bad reference.
    let short = store.resolve_run("6f1c").unwrap_err();
    assert!(matches!(short, StoreError::BadRunRef { .. }), "{short}");
}

#[test]
fn deleting_runs_removes_every_row_they_own() {
    let (_dir, mut store) = new_store();
    let keep = store_run(&mut store, "quick", "2026-01-01T00:00:00Z", 1);
    let outcome = store.import_runs(&[exported_run(UUID_A, "a")]).unwrap();
    let Imported::Added { id: gone, .. } = outcome[0].clone() else {
        panic!("{outcome:?}");
    };
    let rows = |store: &Store| -> Vec<i64> {
        ["run", "run_case", "trial", "metric", "sample", "histogram"]
            .iter()
            .map(|table| {
                store
                    .conn
                    .sqlite()
                    .unwrap()
                    .query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
                        row.get(0)
                    })
                    .unwrap()
            })
            .collect()
    };
    let before = rows(&store);
    assert_eq!(before, vec![2, 3, 5, 4, 8, 1]);

    // An unknown id among them: nothing is removed.
    let err = store.delete_runs(&[gone, 999]).unwrap_err();
    assert!(
        matches!(err, StoreError::NoSuchRun { id: 999, .. }),
        "{err}"
    );
    assert_eq!(rows(&store), before);

    store.delete_runs(&[gone]).unwrap();
    assert_eq!(rows(&store), vec![1, 1, 1, 1, 1, 0]);
    assert_eq!(store.list_runs().unwrap()[0].id, keep);
    assert!(matches!(
        store.load_run(gone),
        Err(StoreError::NoSuchRun { .. })
    ));
    // The UUID is free again: importing the run brings it back.
    let outcome = store.import_runs(&[exported_run(UUID_A, "a")]).unwrap();
    assert!(matches!(outcome[0], Imported::Added { .. }), "{outcome:?}");
}

/// Sets run `id` running on this host with this owner, as a sledge
/// running it here would have left it.
fn set_owner(store: &Store, id: i64, owner: Option<&str>) {
    set_owner_on(store, id, owner, &crate::probe::hostname());
}

/// Sets run `id` running on `hostname` with this owner.
fn set_owner_on(store: &Store, id: i64, owner: Option<&str>, hostname: &str) {
    store
        .conn
        .sqlite()
        .unwrap()
        .execute(
            "UPDATE run SET owner = ?1, status = 'running', finished = NULL, hostname = ?3
             WHERE id = ?2",
            rusqlite::params![owner, id, hostname],
        )
        .unwrap();
}

#[test]
fn a_running_run_whose_sledge_is_gone_reads_and_is_marked_abandoned() {
    let (_dir, mut store) = new_store();
    let me = crate::monitor::procfs::ProcessIdentity::current().unwrap();
    // Run 1: started by this process (alive). Run 2: by a process of
    // another boot (gone). Run 3: by an older sledge (owner unknown).
    // Run 4: complete.
    let alive = store_run(&mut store, "quick", "2026-01-01T00:00:00Z", 1);
    let gone = store_run(&mut store, "quick", "2026-01-02T00:00:00Z", 2);
    let unknown = store_run(&mut store, "quick", "2026-01-03T00:00:00Z", 1);
    let done = store_run(&mut store, "quick", "2026-01-04T00:00:00Z", 1);
    store
        .finish_run(done, RunStatus::Complete, "2026-01-04T00:01:00Z", &[])
        .unwrap();
    assert_eq!(
        store
            .conn
            .sqlite()
            .unwrap()
            .query_row("SELECT owner FROM run WHERE id = ?1", [alive], |r| r
                .get::<_, String>(0))
            .unwrap(),
        me.to_string(),
        "a run this process begins is owned by it"
    );
    set_owner(&store, alive, Some(&me.to_string()));
    set_owner(
        &store,
        gone,
        Some(&format!("another-boot:{}:{}", me.pid, me.starttime)),
    );
    set_owner(&store, unknown, None);
    // Run 5: a run of another host sharing the store; its owner's boot id
    // is not this host's, which says nothing about that host's process.
    let elsewhere = store_run(&mut store, "quick", "2026-01-04T00:00:00Z", 1);
    set_owner_on(
        &store,
        elsewhere,
        Some(&format!("another-boot:{}:{}", me.pid, me.starttime)),
        "another-host-sharing-the-store",
    );

    // Read-only views already say so, without writing.
    let status_of = |store: &Store, id| store.load_run(id).unwrap().status;
    assert_eq!(status_of(&store, gone), RunStatus::Abandoned);
    assert_eq!(status_of(&store, alive), RunStatus::Running);
    assert_eq!(status_of(&store, unknown), RunStatus::Running);
    assert_eq!(status_of(&store, elsewhere), RunStatus::Running);
    let listed = store.list_runs().unwrap();
    assert_eq!(
        listed.iter().find(|r| r.id == gone).unwrap().status,
        RunStatus::Abandoned
    );

    assert_eq!(store.mark_abandoned_runs().unwrap(), vec![gone]);
    let run = store.load_run(gone).unwrap();
    assert_eq!(run.status, RunStatus::Abandoned);
    assert_eq!(run.cases.len(), 2, "its stored cases are kept");
    assert!(
        run.warnings
            .iter()
            .any(|w| w.starts_with("abandoned: the sledge running it"))
    );
    // Nothing more to mark the second time.
    assert!(store.mark_abandoned_runs().unwrap().is_empty());

    // A second Ctrl-C marks this process's running runs partial.
    assert_eq!(
        store.mark_own_runs_partial("2026-01-05T00:00:00Z").unwrap(),
        vec![alive]
    );
    assert_eq!(status_of(&store, alive), RunStatus::Partial);
    assert_eq!(status_of(&store, unknown), RunStatus::Running);
}

#[test]
fn the_run_table_rebuild_keeps_every_case_linked() {
    // A store at version 3 with a run and a case: the upgrade to 4
    // rebuilds the run table with foreign keys off, and must neither drop
    // the case nor leave it pointing nowhere.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v3.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        for step in &schema::MIGRATIONS[..3] {
            conn.execute_batch(step).unwrap();
        }
        conn.pragma_update(None, "application_id", APPLICATION_ID as i32)
            .unwrap();
        conn.pragma_update(None, "user_version", 3).unwrap();
        conn.execute(
            "INSERT INTO run (started, sledge_version, profile, command_line, status, uuid)
             VALUES ('2026-01-01T00:00:00Z', '0.1.0', 'quick', 'sledge run', 'complete',
                     '6f1c1c3e-2b4d-4c55-9a77-0d7e8f9a0b1c')",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO run_case (run_id, workload, workload_version) VALUES (1, 'cpu.primes', 1)",
            [],
        )
        .unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    assert_eq!(
        schema::user_version(store.conn.sqlite().unwrap()).unwrap(),
        SCHEMA_VERSION
    );
    let run = store.load_run(1).unwrap();
    assert_eq!(run.cases.len(), 1);
    assert_eq!(run.uuid, "6f1c1c3e-2b4d-4c55-9a77-0d7e8f9a0b1c");
    let foreign_keys: bool = store
        .conn
        .sqlite()
        .unwrap()
        .pragma_query_value(None, "foreign_keys", |row| row.get(0))
        .unwrap();
    assert!(foreign_keys, "foreign keys are on again after the upgrade");
    // The new status is allowed, and deleting the run still cascades.
    store
        .conn
        .sqlite()
        .unwrap()
        .execute("UPDATE run SET status = 'abandoned' WHERE id = 1", [])
        .unwrap();
    store.delete_runs(&[1]).unwrap();
    let cases: i64 = store
        .conn
        .sqlite()
        .unwrap()
        .query_row("SELECT count(*) FROM run_case", [], |r| r.get(0))
        .unwrap();
    assert_eq!(cases, 0);
}
