// SPDX-License-Identifier: GPL-2.0-only
//! `schedmath platform show` of every shipped platform, as a person reads it.

use std::path::{Path, PathBuf};

use schedmath_host::platform::{show, Platform};

fn platforms_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/platforms")
}

/// Loads a shipped platform with a stable, relative origin.
fn load(name: &str) -> Platform {
    let path = platforms_dir().join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&path).unwrap();
    Platform::from_toml_str(&text, &format!("fixtures/platforms/{name}.toml")).unwrap()
}

const SHIPPED: &[&str] = &[
    "lab-qemu-2c",
    "lab-qemu-4c",
    "laptop-2c4t",
    "m1pro-10c",
    "m1pro-8c",
    "orion-o6",
    "pixel6",
    "rk3399",
];

#[test]
fn every_platform_file_is_snapshotted() {
    let mut on_disk: Vec<String> = std::fs::read_dir(platforms_dir())
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "toml").then(|| p.file_stem().unwrap().to_string_lossy().into())
        })
        .collect();
    on_disk.sort();
    assert_eq!(on_disk, SHIPPED);
}

#[test]
fn platform_show_snapshots() {
    for name in SHIPPED {
        insta::assert_snapshot!(format!("platform_show_{name}"), show::render(&load(name)));
    }
}

#[test]
fn platform_show_json_rk3399() {
    let json = serde_json::to_string_pretty(&load("rk3399")).unwrap();
    insta::assert_snapshot!("platform_show_json_rk3399", json);
}

#[test]
fn shipped_capacities_are_the_documented_ones() {
    let caps = |n: &str| -> Vec<u64> { load(n).cpus.iter().map(|c| c.capacity_orig).collect() };
    assert_eq!(caps("rk3399"), [381, 381, 381, 381, 1024, 1024]);
    assert_eq!(
        caps("m1pro-8c"),
        [485, 485, 1024, 1024, 1024, 1024, 1024, 1024]
    );
    assert_eq!(caps("m1pro-10c").len(), 10);
    assert_eq!(
        caps("orion-o6"),
        [1024, 279, 279, 279, 279, 905, 905, 866, 866, 984, 984, 1024]
    );
    assert_eq!(caps("pixel6"), [160, 160, 160, 160, 498, 498, 1024, 1024]);
    assert_eq!(caps("laptop-2c4t"), [1024; 4]);
    assert!(!load("laptop-2c4t").eas);
}

#[test]
fn rk3399_energy_model_matches_the_capacity_fixture() {
    // fixtures/kernel/capacity/energy.jsonl create-a53_rk3399 / create-a72_rk3399.
    let p = load("rk3399");
    let col = |d: usize, f: fn(&schedmath::energy::EmPerfState) -> u64| -> Vec<u64> {
        p.domains[d]
            .em
            .as_ref()
            .unwrap()
            .table
            .iter()
            .map(f)
            .collect()
    };
    assert_eq!(
        col(0, |s| s.power),
        [27769, 40837, 58956, 86247, 120000, 179212]
    );
    assert_eq!(col(0, |s| s.cost), [2547, 2536, 2692, 3182, 3726, 4703]);
    assert_eq!(col(0, |s| s.flags), [1, 0, 0, 0, 0, 0]);
    assert_eq!(
        col(1, |s| s.cost),
        [5218, 5221, 5218, 5872, 6923, 8057, 9281, 11036]
    );
    assert_eq!(col(1, |s| s.flags), [1, 1, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn broken_file_on_disk_names_file_and_key() {
    let dir = std::env::temp_dir().join(format!("schedmath-platform-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("broken.toml");
    let text = std::fs::read_to_string(platforms_dir().join("rk3399.toml"))
        .unwrap()
        .replace(
            "{ khz = 600000, uv = 825000 },\n  { khz = 816000, uv = 850000 }",
            "{ khz = 816000, uv = 825000 },\n  { khz = 600000, uv = 850000 }",
        );
    std::fs::write(&path, text).unwrap();
    let e = Platform::load(&path).unwrap_err().to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        e,
        format!(
            "{}: domain[0].opp[2].khz: OPP table not sorted: 600000 kHz after 816000 kHz (list OPPs by ascending frequency)",
            path.display()
        )
    );
}
