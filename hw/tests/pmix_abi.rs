//! The PMIx client's hand-written ABI (`hw::bootstrap::PMIX_ABI`) against the real
//! `pmix_common.h`: a C program prints every size, offset and constant by the header's own
//! names, and each must equal this crate's. Runs where `libpmix-dev` is installed
//! (`pkg-config --cflags pmix`) and says so when it skips.

#![cfg(any(feature = "process", feature = "cuda"))]

use std::process::Command;

use hw::bootstrap::PMIX_ABI;

#[test]
fn the_hand_written_pmix_abi_matches_the_installed_header() {
    let cflags = match Command::new("pkg-config")
        .args(["--cflags", "pmix"])
        .output()
    {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        _ => {
            eprintln!(
                "skipped: no PMIx header (pkg-config --cflags pmix failed); install libpmix-dev"
            );
            return;
        }
    };
    let dir = std::env::temp_dir().join(format!("rshmem-pmix-abi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prints: String = PMIX_ABI
        .iter()
        .map(|(name, _)| {
            format!("    printf(\"%s=%llu\\n\", \"{name}\", (unsigned long long)({name}));\n")
        })
        .collect();
    let source = format!(
        "#include <stddef.h>\n#include <stdio.h>\n#include <pmix_common.h>\n\
         int main(void) {{\n{prints}    return 0;\n}}\n"
    );
    std::fs::write(dir.join("abi.c"), source).unwrap();
    let built = Command::new("cc")
        .args(cflags.split_whitespace())
        .arg(dir.join("abi.c"))
        .arg("-o")
        .arg(dir.join("abi"))
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let out = Command::new(dir.join("abi")).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let printed = String::from_utf8_lossy(&out.stdout);
    let header: Vec<(&str, u64)> = printed
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(name, value)| (name, value.parse().unwrap()))
        .collect();
    assert_eq!(header.len(), PMIX_ABI.len(), "{printed}");
    for ((name, ours), (_, theirs)) in PMIX_ABI.iter().zip(&header) {
        assert_eq!(
            ours, theirs,
            "{name}: rshmem assumes {ours}, the header says {theirs}"
        );
    }
}
