// SPDX-License-Identifier: GPL-2.0-only
//! The `schedmath.irq_pct` workload extension: per CPU, the share of wall time spent in
//! hard/soft irq. Accepted and rejected forms (errors name file:line:column and the key
//! path), and the CPU check against a platform.

use schedmath_host::workload::{IrqShare, Workload};

/// A one-task workload with `ext` as the extension's `irq_pct` value.
fn with_irq(ext: &str) -> String {
    format!(
        "{{\n \"tasks\" : {{ \"t\" : {{ \"run\" : 10 }} }},\n \"schedmath\" : {{ \"irq_pct\" : {ext} }}\n}}"
    )
}

fn load(text: &str) -> Result<Workload, String> {
    Workload::from_str_with_ext(text, "w.json", Some("json")).map_err(|e| e.to_string())
}

fn shares(w: &Workload) -> Vec<(usize, u32)> {
    w.global.irq_pct.iter().map(|s| (s.cpu, s.pct)).collect()
}

#[test]
fn irq_shares_are_read_per_cpu_sorted_by_cpu() {
    let w = load(&with_irq("{ \"5\" : 2, \"4\" : 10 }")).unwrap();
    assert_eq!(shares(&w), [(4, 10), (5, 2)]);
    let w = load(&with_irq("{ \"0\" : 1, \"3\" : 90 }")).unwrap();
    assert_eq!(shares(&w), [(0, 1), (3, 90)]);
    assert_eq!(
        w.global.irq_pct[0],
        IrqShare {
            cpu: 0,
            pct: 1,
            at: schedmath_host::workload::json::Loc {
                line: 3,
                column: 32
            },
        }
    );
    let w = load("{ \"tasks\" : { \"t\" : { \"run\" : 1 } } }").unwrap();
    assert!(w.global.irq_pct.is_empty());
    // An empty object is no irq time at all.
    assert!(load(&with_irq("{}")).unwrap().global.irq_pct.is_empty());
}

#[test]
fn bad_cpu_keys_name_line_column_and_key() {
    for (key, col) in [("x", 32), ("-1", 32), ("04", 32), ("", 32), (" 4", 32)] {
        assert_eq!(
            load(&with_irq(&format!("{{ \"{key}\" : 10 }}"))).unwrap_err(),
            format!(
                "w.json:3:{col}: schedmath.irq_pct.{key}: expected a CPU number (0, 1, ...) as the key"
            ),
            "{key:?}"
        );
    }
    // A repeated key is read as json-c reads every object: the last value, with a warning.
    let w = load(&with_irq("{ \"4\" : 10, \"4\" : 20 }")).unwrap();
    assert_eq!(
        w.global
            .irq_pct
            .iter()
            .map(|s| (s.cpu, s.pct))
            .collect::<Vec<_>>(),
        [(4, 20)]
    );
    assert_eq!(w.warnings()[0].path, "schedmath.irq_pct.4");
    assert_eq!(
        load(&with_irq("[4, 10]")).unwrap_err(),
        "w.json:3:30: schedmath.irq_pct: expected an object, found an array"
    );
}

#[test]
fn irq_shares_out_of_range_name_line_column_and_key() {
    for v in ["0", "91", "100", "-5"] {
        assert_eq!(
            load(&with_irq(&format!("{{ \"4\" : {v} }}"))).unwrap_err(),
            format!(
                "w.json:3:38: schedmath.irq_pct.4: irq share {v} % out of 1..=90 % of wall time"
            ),
            "{v}"
        );
    }
    assert_eq!(
        load(&with_irq("{ \"4\" : 2.5 }")).unwrap_err(),
        "w.json:3:38: schedmath.irq_pct.4: expected an integer, found a non-integer number"
    );
    assert_eq!(
        load(&with_irq("{ \"4\" : \"10\" }")).unwrap_err(),
        "w.json:3:38: schedmath.irq_pct.4: expected an integer, found a string"
    );
}

#[test]
fn an_irq_cpu_the_platform_lacks_is_an_error() {
    let w = load(&with_irq("{ \"4\" : 10, \"6\" : 3 }")).unwrap();
    // rk3399 has CPUs 0..=5.
    assert_eq!(
        w.validate(6).unwrap_err().to_string(),
        "w.json:3:42: schedmath.irq_pct.6: CPU 6 does not exist: the platform has 6 CPUs (0..=5)"
    );
    w.validate(7).unwrap();
}

#[test]
fn the_summary_lists_irq_time() {
    let w = load(&with_irq("{ \"5\" : 2, \"4\" : 10 }")).unwrap();
    let text = schedmath_host::workload::show::render(&w, false);
    assert!(
        text.contains("\nirq time: CPU 4 10 %, CPU 5 2 %\n"),
        "{text}"
    );
}
