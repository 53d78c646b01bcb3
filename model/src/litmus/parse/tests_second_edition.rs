//! The parser on the forms of the format's second edition, and one test per new error.

use super::*;
use crate::litmus::{
    AmoOp, AmoWidth, Cmp, Ctx, Instr, Observable, Observation, Prop, PutKind, Reg, SignalOp, Value,
};

const ALL_NEW_FORMS: &str = r#"litmus second-edition
source "s"
pes 3
array buf 4
init buf[1]@2 = 7
P0:
  r0 = signal_fetch s
  r1 = test x >= r0
  wait_all x y == 1
  r2 = wait_any x y != 0
  r3 = test_any x y == -1
  pe_quiet 2
  team_sync {2,0}
  team_barrier {0,1,2}
  r4 = fetch x@1 until == 1
  r5 = g y@2 until != r4 ctx A
  r6 = ld x@1
  st y@2 = r6
  put buf@1 = 3
  put_nbi buf@2 = r6
  r7 = ld buf[2]
  st buf[0] = 1
  add32 x@1 1
  r8 = fetch_add32_nbi y@1 r1
  wait x == r1
  put_signal x@1 = 1, s ADD r2
P2:
  team_sync {0,2}
exists (P0:r3 == -1 /\ buf[2]@1 == 3)
expect nv-nvl undefined
"#;

#[test]
fn every_form_of_the_second_edition() {
    let test = parse("new.litmus", ALL_NEW_FORMS).unwrap();
    assert_eq!(&test.vars[..4], ["buf[0]", "buf[1]", "buf[2]", "buf[3]"]);
    let (buf0, buf2) = (VarId(0), VarId(2));
    let (s, x, y) = (VarId(4), VarId(5), VarId(6));
    assert_eq!(
        test.init,
        [(
            Loc {
                var: VarId(1),
                pe: 2
            },
            7
        )]
    );
    let p0: Vec<Instr> = test.programs[0].iter().map(|(i, _)| i.clone()).collect();
    let want = [
        Instr::SignalFetch {
            reg: Reg(0),
            var: s,
        },
        Instr::Test {
            reg: Reg(1),
            var: x,
            cmp: Cmp::Ge,
            value: Value::Reg(Reg(0)),
        },
        Instr::WaitAll {
            vars: vec![x, y],
            cmp: Cmp::Eq,
            value: Value::Const(1),
        },
        Instr::WaitAny {
            reg: Reg(2),
            vars: vec![x, y],
            cmp: Cmp::Ne,
            value: Value::Const(0),
        },
        Instr::TestAny {
            reg: Reg(3),
            vars: vec![x, y],
            cmp: Cmp::Eq,
            value: Value::Const(u64::MAX),
        },
        Instr::PeQuiet { pe: 2 },
        Instr::Team {
            pes: vec![0, 2],
            barrier: false,
        },
        Instr::Team {
            pes: vec![0, 1, 2],
            barrier: true,
        },
        Instr::Spin {
            reg: Reg(4),
            src: Loc { var: x, pe: 1 },
            atomic: true,
            cmp: Cmp::Eq,
            value: Value::Const(1),
            ctx: Ctx::DEFAULT,
        },
        Instr::Spin {
            reg: Reg(5),
            src: Loc { var: y, pe: 2 },
            atomic: false,
            cmp: Cmp::Ne,
            value: Value::Reg(Reg(4)),
            ctx: Ctx(1),
        },
        Instr::PeerLoad {
            reg: Reg(6),
            src: Loc { var: x, pe: 1 },
        },
        Instr::PeerStore {
            dst: Loc { var: y, pe: 2 },
            value: Value::Reg(Reg(6)),
        },
        Instr::PutArray {
            kind: PutKind::Put,
            dst: Loc { var: buf0, pe: 1 },
            words: 4,
            value: Value::Const(3),
            ctx: Ctx::DEFAULT,
        },
        Instr::PutArray {
            kind: PutKind::PutNbi,
            dst: Loc { var: buf0, pe: 2 },
            words: 4,
            value: Value::Reg(Reg(6)),
            ctx: Ctx::DEFAULT,
        },
        Instr::Load {
            reg: Reg(7),
            var: buf2,
        },
        Instr::Store {
            var: buf0,
            value: Value::Const(1),
        },
        Instr::Amo {
            op: AmoOp::Add(Value::Const(1)),
            dst: Loc { var: x, pe: 1 },
            fetch: None,
            nbi: false,
            width: AmoWidth::W32,
            ctx: Ctx::DEFAULT,
        },
        Instr::Amo {
            op: AmoOp::Add(Value::Reg(Reg(1))),
            dst: Loc { var: y, pe: 1 },
            fetch: Some(Reg(8)),
            nbi: true,
            width: AmoWidth::W32,
            ctx: Ctx::DEFAULT,
        },
        Instr::Wait {
            var: x,
            cmp: Cmp::Eq,
            value: Value::Reg(Reg(1)),
        },
        Instr::PutSignal {
            dst: Loc { var: x, pe: 1 },
            value: Value::Const(1),
            signal: Loc { var: s, pe: 1 },
            op: SignalOp::Add,
            signal_value: Value::Reg(Reg(2)),
            nbi: false,
            ctx: Ctx::DEFAULT,
        },
    ];
    assert_eq!(p0, want);
    let Prop::And(a, b) = &test.condition.prop else {
        panic!("a conjunction: {:?}", test.condition.prop);
    };
    assert_eq!(
        **a,
        Prop::Atom {
            lhs: Observable::Reg { pe: 0, reg: Reg(3) },
            cmp: Cmp::Eq,
            rhs: u64::MAX
        }
    );
    assert!(matches!(
        **b,
        Prop::Atom {
            lhs: Observable::Mem(Loc {
                var: VarId(2),
                pe: 1
            }),
            rhs: 3,
            ..
        }
    ));
    assert_eq!(test.expect[0].observation, Observation::Undefined);
}

/// Parses `text` and returns the error's display.
fn error(text: &str) -> String {
    parse("t.litmus", text)
        .expect_err("must be rejected")
        .to_string()
}

const HEAD: &str = "litmus t\nsource \"s\"\npes 3\narray buf 2\n";

#[test]
fn each_error_of_the_second_edition() {
    let cases: &[(&str, &str)] = &[
        (
            "P0:\n  r0 = get_nbi x@1\n  put y@1 = r0\n  quiet\nexists (x@1 == 0)\n",
            "t.litmus:7:3: r0 is read before 'quiet' completes the nbi fetch of line 6 that \
             fills it (its value is undefined until then)",
        ),
        (
            "P0:\n  r0 = fetch_add_nbi x@1 1 ctx A\n  quiet\n  wait y == r0\nexists (x@1 == 0)\n",
            "t.litmus:8:3: r0 is read before 'quiet ctx A' completes the nbi fetch of line 6 \
             that fills it (its value is undefined until then)",
        ),
        (
            "P0:\n  team_sync {0,0}\nexists (x@1 == 0)\n",
            "t.litmus:6:16: the team lists PE 0 twice",
        ),
        (
            "P1:\n  team_barrier {0,2}\nexists (x@1 == 0)\n",
            "t.litmus:6:16: P1 runs team_barrier of a team it is not in (list P1 in the team, \
             or remove the line: PEs outside a team do not run its operations)",
        ),
        (
            "P0:\n  team_sync 0,2\nexists (x@1 == 0)\n",
            "t.litmus:6:13: expected '{' and the team's PEs (as in '{0,2}'), found '0'",
        ),
        (
            "P0:\n  p buf@1 = 1\nexists (x@1 == 0)\n",
            "t.litmus:6:5: 'p' puts one word, but 'buf' is an array (use 'put buf@P' for all \
             of it, or 'p buf[i]@P' for one word)",
        ),
        (
            "P0:\n  wait buf == 1\nexists (x@1 == 0)\n",
            "t.litmus:6:8: 'buf' is an array of 2 words: name one word as 'buf[i]'",
        ),
        (
            "P0:\n  r0 = ld buf[2]\nexists (x@1 == 0)\n",
            "t.litmus:6:15: 'buf[2]' is beyond the array (words 0 to 1)",
        ),
        (
            "P0:\n  r0 = ld x[0]\nexists (x@1 == 0)\n",
            "t.litmus:6:12: 'x' is not an array (declare it with 'array x N' first)",
        ),
        (
            "array buf 3\n",
            "t.litmus:5:7: 'array buf' must come before any use of 'buf', once",
        ),
        (
            "array big 65\n",
            "t.litmus:5:11: an array has 1 to 64 words, found 65",
        ),
        (
            "P0:\n  put add32@1 = 1\nexists (x@1 == 0)\n",
            "t.litmus:6:7: 'add32' is reserved and cannot name a variable",
        ),
        (
            "P0:\n  r0 = test_any x y\nexists (x@1 == 0)\n",
            "t.litmus:6:20: expected a comparison ('==', '!=', '>', '>=', '<', '<='), found \
             end of line",
        ),
        (
            "P0:\n  test x == 1\nexists (x@1 == 0)\n",
            "t.litmus:6:3: expected 'rK =' before 'test', found 'test'",
        ),
        (
            "P0:\n  r0 = fetch_add x@1 1 until == 1\nexists (x@1 == 0)\n",
            "t.litmus:6:24: expected end of line, found 'until'",
        ),
        (
            "P0:\n  r0 = g x@1 until = 1\nexists (x@1 == 0)\n",
            "t.litmus:6:20: expected a comparison ('==', '!=', '>', '>=', '<', '<='), found '='",
        ),
        (
            "P0:\n  pe_quiet 3\nexists (x@1 == 0)\n",
            "t.litmus:6:12: PE 3 is out of range (pes 3: PEs 0 to 2)",
        ),
        (
            "P0:\n  fence\nexists (x@1 == -)\n",
            "t.litmus:7:16: unexpected character '-'",
        ),
        (
            "P0:\n  fence\nexists (x@1 == 0)\nexpect os unknown\n",
            "t.litmus:8:11: expected 'always', 'sometimes', 'never' or 'undefined', found \
             'unknown'",
        ),
    ];
    for (body, want) in cases {
        assert_eq!(&error(&format!("{HEAD}{body}")), want, "for {body:?}");
    }
}

#[test]
fn an_nbi_fetch_register_is_readable_after_its_quiet() {
    let text = format!(
        "{HEAD}P0:\n  r0 = get_nbi x@1\n  r1 = fetch_inc_nbi y@2\n  barrier_all\n  \
         put y@1 = r0\n  r2 = get_nbi x@2 ctx A\n  r2 = ld x\n  put x@1 = r2\n\
         P1:\n  barrier_all\nP2:\n  barrier_all\nexists (x@1 == 0)\n"
    );
    parse("t.litmus", &text).unwrap();
}
