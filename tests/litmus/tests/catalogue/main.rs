//! The litmus catalogue (`tests/litmus/catalogue`) against the model and the simulator, in one
//! test binary: every check must match (`checks`), and every deliberately broken rule of the
//! simulator must make some check mismatch (`faults`).

mod checks;
mod faults;

use litmus::{LitmusFile, catalogue_dir, load_paths};

/// Every test of the catalogue.
fn catalogue() -> Vec<LitmusFile> {
    load_paths(&[catalogue_dir()]).expect("the catalogue parses")
}
