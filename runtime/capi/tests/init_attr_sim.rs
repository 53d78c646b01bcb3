//! `nvshmemx_init_attr` on the simulator, where the simulator is the bootstrap: a unique id
//! opens nothing, and the ranks the program claims must be the PE's own
//! (`tests/nvshmem/uid_on_the_simulator.c`).

mod common;

use std::time::Duration;

use common::{
    build_library_and_launcher, compile_with, exit_code, repo_root, require_compilers, run_tool,
    scratch_dir,
};

#[test]
fn a_unique_id_on_the_simulator_opens_nothing_and_a_wrong_rank_is_refused_naming_both() {
    require_compilers();
    build_library_and_launcher();
    let dir = scratch_dir();
    let program = compile_with(&repo_root(), &dir, "nvshmem/uid_on_the_simulator.c", &[])
        .unwrap_or_else(|e| panic!("{e}"));
    let program = program.to_str().expect("a UTF-8 scratch path");
    let sim = |n: &str, claimed: &str| {
        let args = ["-np", n, "--sim", "hgx8", "--seed", "1", program, claimed];
        run_tool(
            &dir,
            "oshrun",
            &args,
            &format!("uid{n}"),
            Duration::from_secs(60),
        )
    };
    let one = sim("1", "1");
    assert_eq!(exit_code(&one), Some(0), "{}", one.stderr);
    assert!(one.stdout.contains("uid: PE 0 of 1"), "{}", one.stdout);
    let two = sim("2", "2");
    assert_ne!(exit_code(&two), Some(0), "{}", two.stdout);
    let said = format!("{}{}", two.stdout, two.stderr);
    assert!(
        said.contains(
            "the unique-id arguments say rank 0 of 2, but the simulator runs this \
                       program as PE 1 of 2"
        ),
        "{said}"
    );
}
