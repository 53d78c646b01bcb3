//! global_exit and the setup queries (pe_accessible, addr_accessible, info_get_*) on the
//! simulator.

use rshmem::{Cmp, PeError, Sym, run};

use crate::common::{config, run_on, sim};

// ---- global_exit ---------------------------------------------------------------------------

#[test]
fn global_exit_ends_every_pe_and_reports_the_status() {
    let output = run(sim("hgx8", 4, 0), config(), |shmem| {
        let flag = shmem.calloc::<u64>(1).expect("calloc");
        match shmem.my_pe() {
            1 => shmem.global_exit(3),
            // Blocked in a wait nobody satisfies.
            0 => {
                let _ = shmem.wait_until(flag, Cmp::Eq, 1);
            }
            // Polling a local word in a loop, which only the exit ends.
            2 => while !shmem.test(flag, Cmp::Eq, 1).expect("test") {},
            // Done with its program, on to the final barrier.
            _ => {}
        }
    })
    .expect("the PEs launch");
    for (pe, result) in output.results.iter().enumerate() {
        assert!(
            matches!(result, Err(PeError::GlobalExit { pe: 1, status: 3 })),
            "PE {pe}: {result:?}"
        );
    }
    assert_eq!(output.global_exit(), Some((1, 3)));
    let message = output.results[0].as_ref().unwrap_err().to_string();
    assert!(message.contains("PE 1 calling global_exit(3)"), "{message}");
    // Promptly: long before any wait's deadline.
    assert!(
        output.report.sim_time_ns < 100_000_000 / 2,
        "{}",
        output.report.sim_time_ns
    );
}

#[test]
fn a_panic_without_global_exit_is_still_a_panic() {
    let output = run(sim("hgx8", 2, 0), config(), |shmem| {
        if shmem.my_pe() == 0 {
            panic!("on purpose");
        }
    })
    .expect("the PEs launch");
    assert!(
        matches!(&output.results[0], Err(PeError::Failed(f)) if f.message == "on purpose"),
        "{:?}",
        output.results[0]
    );
    assert!(
        matches!(output.results[1], Err(PeError::Finalize { .. })),
        "{:?}",
        output.results[1]
    );
    assert_eq!(output.global_exit(), None);
}

// ---- setup queries -------------------------------------------------------------------------

#[test]
fn accessibility_and_library_queries() {
    run_on("hgx8", 2, 0, |shmem| {
        let n = shmem.n_pes();
        assert!((0..n).all(|pe| shmem.pe_accessible(pe)));
        assert!(!shmem.pe_accessible(n));
        let sym: Sym<u64> = shmem.malloc(4).expect("malloc");
        assert!(shmem.addr_accessible(sym, 1));
        assert!(shmem.addr_accessible(sym.slice(1..3).expect("view"), 0));
        assert!(!shmem.addr_accessible(sym, n));
        assert!(
            !shmem.addr_accessible(sym.addr().cast::<u64>(5), 0),
            "past the end"
        );
        assert!(!shmem.addr_accessible(sym.addr().byte_add(4).cast::<u64>(1), 0));
        shmem.free(sym).expect("free");
        assert!(!shmem.addr_accessible(sym, 0), "freed");
    });
    assert_eq!(rshmem::info_get_version(), (1, 5));
    assert!(rshmem::info_get_name().starts_with("rshmem "));
}
