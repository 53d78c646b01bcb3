//! The team barrier within split teams.

use super::{HGX8, IB2, me_and_n, run_on_machine, teams};

#[test]
fn team_barrier_completes_puts_within_split_teams() {
    for machine in [HGX8, IB2] {
        let (failures, _) = run_on_machine(machine, |shmem| {
            // A slot per team: members of one team may still be busy in the previous team
            // while another team's members already put.
            let slots = shmem.calloc::<u64>(5).expect("calloc");
            let mut failures = Vec::new();
            for (name, team) in teams(shmem) {
                let (me, n) = me_and_n(&team);
                let slot = slots.at(slot_of(name)).expect("a slot");
                for round in 0..3u64 {
                    // Each member puts into the next member's slot, by world PE number.
                    let next = shmem
                        .team_translate_pe(&team, (me + 1) % n, shmem.team_world())
                        .expect("translate")
                        .expect("a team PE is a world PE");
                    shmem.p(slot, round * 100 + u64::from(me), next).expect("p");
                    shmem.team_barrier(&team).expect("team_barrier");
                    let got = shmem.local(slot).expect("local")[0];
                    let want = round * 100 + u64::from((me + n - 1) % n);
                    if got != want {
                        failures.push(format!("{name} round {round}: {got} instead of {want}"));
                    }
                    shmem.team_sync(&team).expect("team_sync");
                }
            }
            failures
        });
        let failures: Vec<String> = failures.into_iter().flatten().collect();
        assert!(failures.is_empty(), "{failures:#?}");
    }
}

/// The slot of a team of [`teams`]: its place in the list of a PE in every team.
fn slot_of(name: &str) -> usize {
    ["world", "strided", "row", "column", "one PE"]
        .iter()
        .position(|n| *n == name)
        .expect("a team of teams()")
}
