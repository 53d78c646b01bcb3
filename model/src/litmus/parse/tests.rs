//! The parser on the example of docs/litmus-format.md, and one test per error.

use super::*;
use crate::litmus::{
    AmoOp, Cmp, Config, Ctx, GetKind, Instr, Observable, Observation, Prop, PutKind, Quantifier,
    Reg, SignalOp, Value,
};

const EXAMPLE: &str = r#"litmus MP+put+fence+put
source "R1 fence: OpenSHMEM 1.5 shmem_fence; NVSHMEM ordering page"
pes 2

P0:
  put x@1 = 1
  fence
  put f@1 = 1
P1:
  wait f == 1
  r0 = ld x

exists (P1:r0 == 0)
expect nv-nvl never
expect nv-ib never
expect nv-mix(0|1) never
expect os never
"#;

fn at(line: u32, column: u32) -> Span {
    Span { line, column }
}

#[test]
fn the_example_of_the_format_document() {
    let test = parse("mp.litmus", EXAMPLE).unwrap();
    let (x, f) = (VarId(0), VarId(1));
    let expect = |config| Expectation {
        config,
        observation: Observation::Never,
        model_derived: false,
        hangs: false,
    };
    let want = Litmus {
        name: "MP+put+fence+put".to_string(),
        source: "R1 fence: OpenSHMEM 1.5 shmem_fence; NVSHMEM ordering page".to_string(),
        n_pes: 2,
        vars: vec!["x".to_string(), "f".to_string()],
        init: vec![],
        programs: vec![
            vec![
                (
                    Instr::Put {
                        kind: PutKind::Put,
                        dst: Loc { var: x, pe: 1 },
                        value: Value::Const(1),
                        ctx: Ctx::DEFAULT,
                    },
                    at(6, 3),
                ),
                (Instr::Fence { ctx: Ctx::DEFAULT }, at(7, 3)),
                (
                    Instr::Put {
                        kind: PutKind::Put,
                        dst: Loc { var: f, pe: 1 },
                        value: Value::Const(1),
                        ctx: Ctx::DEFAULT,
                    },
                    at(8, 3),
                ),
            ],
            vec![
                (
                    Instr::Wait {
                        var: f,
                        cmp: Cmp::Eq,
                        value: Value::Const(1),
                    },
                    at(10, 3),
                ),
                (
                    Instr::Load {
                        reg: Reg(0),
                        var: x,
                    },
                    at(11, 3),
                ),
            ],
        ],
        condition: Condition {
            quantifier: Quantifier::Exists,
            prop: Prop::Atom {
                lhs: Observable::Reg { pe: 1, reg: Reg(0) },
                cmp: Cmp::Eq,
                rhs: 0,
            },
        },
        expect: vec![
            expect(Config::NV_NVL),
            expect(Config::NV_IB),
            expect(Config::nv_mix(vec![0, 1])),
            expect(Config::OS),
        ],
    };
    assert_eq!(test, want);
}

#[test]
fn every_instruction_form() {
    let text = r#"litmus all # a comment
source "all forms # not a comment"
pes 3
init x@1 = 5; y@0 = 2
P0:
  p x@1 = r1
  put_nbi x@1 = 2 ctx A
  r1 = g x@2
  r2 = get_nbi x@2 ctx B
  set x@1 = 3
  add x@1 2
  inc x@1
  and x@1 1
  or x@1 1
  xor x@1 r1
  r3 = fetch x@1
  r4 = swap x@1 1
  r5 = compare_swap x@1 0 r4
  r6 = fetch_inc_nbi x@1 ctx A
  put_signal_nbi x@1 = 1, s@1 ADD 2
  quiet ctx A
  barrier_all
  sync_all
  signal_wait s >= 1
  st y = r6
P2:
  r15 = fetch_xor x@0 7
~exists (P0:r1 == 0 /\ ~(y@0 == 3) \/ x@1 != 1 /\ P2:r15 > 2)
expect nv-mix(1|0 2) sometimes (model)
"#;
    let test = parse("all.litmus", text).unwrap();
    assert_eq!(test.vars, ["x", "y", "s"]);
    assert_eq!(test.source, "all forms # not a comment");
    let p0: Vec<&Instr> = test.programs[0].iter().map(|(i, _)| i).collect();
    assert_eq!(p0.len(), 20);
    assert!(matches!(
        p0[1],
        Instr::Put {
            kind: PutKind::PutNbi,
            ctx: Ctx(1),
            ..
        }
    ));
    assert!(matches!(
        p0[3],
        Instr::Get {
            kind: GetKind::GetNbi,
            ctx: Ctx(2),
            ..
        }
    ));
    assert!(matches!(
        p0[12],
        Instr::Amo {
            op: AmoOp::CompareSwap {
                cond: Value::Const(0),
                new: Value::Reg(Reg(4))
            },
            fetch: Some(Reg(5)),
            nbi: false,
            ..
        }
    ));
    assert!(matches!(
        p0[13],
        Instr::Amo {
            op: AmoOp::Inc,
            nbi: true,
            ctx: Ctx(1),
            ..
        }
    ));
    assert!(matches!(
        p0[14],
        Instr::PutSignal {
            op: SignalOp::Add,
            signal_value: Value::Const(2),
            nbi: true,
            signal: Loc { pe: 1, .. },
            ..
        }
    ));
    assert!(test.programs[1].is_empty());
    assert_eq!(test.condition.quantifier, Quantifier::NotExists);
    // `/\` binds tighter than `\/`.
    assert!(matches!(test.condition.prop, Prop::Or(..)));
    // Hosts are canonical: the host of P0 is 0.
    assert_eq!(test.expect[0].config, Config::nv_mix(vec![0, 1, 0]));
    assert!(test.expect[0].model_derived);
}

/// Parses `text` and returns the error's display.
fn error(text: &str) -> String {
    parse("t.litmus", text)
        .expect_err("must be rejected")
        .to_string()
}

const HEAD: &str = "litmus t\nsource \"s\"\npes 2\n";

#[test]
fn the_error_of_the_brief() {
    let text = "litmus mp\nsource \"s\"\npes 2\nP0:\n  put x@1 = 1\n  fence\n  put x@x = 1\n";
    assert_eq!(
        error(text),
        "t.litmus:7:9: expected a PE number after '@', found 'x'"
    );
}

#[test]
fn errors_name_line_column_and_what_was_expected() {
    let cases: &[(&str, &str)] = &[
        (
            "P0:\n  frob x@1\nexists (x@1 == 0)\n",
            "t.litmus:5:3: unknown instruction 'frob'",
        ),
        (
            "P0:\n  r16 = g x@1\nexists (x@1 == 0)\n",
            "t.litmus:5:3: register 'r16' does not exist (registers are r0 to r15)",
        ),
        (
            "P0:\n  put x@3 = 1\nexists (x@1 == 0)\n",
            "t.litmus:5:9: PE 3 is out of range (pes 2: PEs 0 to 1)",
        ),
        (
            "P2:\n  fence\nexists (x@1 == 0)\n",
            "t.litmus:4:1: PE 2 is out of range (pes 2: PEs 0 to 1)",
        ),
        (
            "P0:\n  fence\nP0:\n  quiet\nexists (x@1 == 0)\n",
            "t.litmus:6:1: duplicate program for P0 (first at line 4)",
        ),
        (
            "P0:\n  r1 = g x@1\nexists (P0:r0 == 0)\n",
            "t.litmus:6:12: P0:r0 is never written by an instruction of P0",
        ),
        (
            "P0:\n  r0 = g x@1\nexists (P1:r0 == 0)\n",
            "t.litmus:6:12: P1:r0 is never written by an instruction of P1",
        ),
        (
            "P0:\n  fence\n",
            "t.litmus:6:1: missing condition ('exists', 'forall' or '~exists')",
        ),
        (
            "P0:\n  fence\nexists (x@1 == 0)\nexpect nv-mix(0) never\n",
            "t.litmus:7:8: nv-mix does not place PE 1 on a host",
        ),
        (
            "P0:\n  fence\nexists (x@1 == 0)\nexpect nv-mix(0|1 0) never\n",
            "t.litmus:7:19: nv-mix places PE 0 more than once",
        ),
        (
            "P0:\n  fence\nexists (x@1 == 0)\nexpect os never\nexpect os always\n",
            "t.litmus:8:8: duplicate expect for os",
        ),
        (
            "P0:\n  fence\nexists (x@1 == 0)\nexpect nv-mix(0|1) never\nexpect nv-mix(1|0) always\n",
            "t.litmus:8:8: duplicate expect for nv-mix(0|1)",
        ),
        (
            "P0:\n  put_signal x@1 = 1, s@0 SET 1\nexists (x@1 == 0)\n",
            "t.litmus:5:25: the signal goes to the data's PE (1), found PE 0 \
             (write the signal variable without '@')",
        ),
        (
            "P0:\n  put g@1 = 1\nexists (x@1 == 0)\n",
            "t.litmus:5:7: 'g' is reserved and cannot name a variable",
        ),
        (
            "P0:\n  fetch_add x@1 1\nexists (x@1 == 0)\n",
            "t.litmus:5:3: expected 'rK =' before 'fetch_add', found 'fetch_add'",
        ),
        (
            "P0:\n  put x@1 = 1 ctx a\nexists (x@1 == 0)\n",
            "t.litmus:5:19: expected a context name in upper case after 'ctx', found 'a'",
        ),
        (
            "P0:\n  put x@1 = 1 2\nexists (x@1 == 0)\n",
            "t.litmus:5:15: expected end of line, found '2'",
        ),
        (
            "P0:\n  wait x = 1\nexists (x@1 == 0)\n",
            "t.litmus:5:10: expected a comparison ('==', '!=', '>', '>=', '<', '<='), found '='",
        ),
        (
            "P0:\n  fence\nexists (x@1 == 0)\nexists (x@1 == 1)\n",
            "t.litmus:7:1: a test has one condition; found a second",
        ),
        (
            "P0:\n  fence\nexists (x@1 == 0)\n  fence\n",
            "t.litmus:7:3: expected 'expect CONFIG OBSERVATION' after the condition, found 'fence'",
        ),
        (
            "  fence\nexists (x@1 == 0)\n",
            "t.litmus:4:3: instruction outside a program (expected 'P<k>:' before it)",
        ),
        (
            "P0:\n  put x@1 = 99999999999999999999\nexists (x@1 == 0)\n",
            "t.litmus:5:13: number '99999999999999999999' does not fit in 64 bits",
        ),
        (
            "P0:\n  fence\nexists (x@1 == 0 /\\ (x@0 == 1)\n",
            "t.litmus:6:31: expected ')', found end of line",
        ),
        (
            "P0:\n  fence\nexists (x@1 == 0)\nexpect nv-foo never\n",
            "t.litmus:7:8: expected a configuration (nv-nvl, nv-ib, nv-mix(...), os, os-net), found 'nv-foo'",
        ),
        ("P0:\n  fence $\n", "t.litmus:5:9: unexpected character '$'"),
    ];
    for (body, want) in cases {
        assert_eq!(&error(&format!("{HEAD}{body}")), want, "for {body:?}");
    }
}

#[test]
fn header_errors() {
    assert_eq!(
        error("pes 2\n"),
        "t.litmus:1:1: expected 'litmus NAME' as the first line, found 'pes'"
    );
    assert_eq!(
        error("litmus a b\n"),
        "t.litmus:1:10: expected end of line after the test name (names have no spaces), found 'b'"
    );
    assert_eq!(
        error("litmus t\npes 2\nP0:\n  fence\nexists (x@1 == 0)\n"),
        "t.litmus:6:1: missing 'source \"...\"' line"
    );
    assert_eq!(
        error("litmus t\nsource \"s\"\nP0:\n  fence\n"),
        "t.litmus:3:1: missing 'pes N' before this line"
    );
    assert_eq!(
        error("litmus t\nsource \"s\"\nexists (x@0 == 0)\n"),
        "t.litmus:3:1: missing 'pes N' before this line"
    );
    assert_eq!(
        error("litmus t\nsource \"s\"\npes 9\n"),
        "t.litmus:3:5: pes must be 1 to 8, found 9"
    );
    assert_eq!(
        error("litmus t\nsource \"s\"\npes 2\npes 2\n"),
        "t.litmus:4:1: duplicate 'pes' line"
    );
    assert_eq!(
        error("litmus t\nsource \"s\npes 2\n"),
        "t.litmus:2:8: string has no closing '\"'"
    );
}

#[test]
fn parse_error_is_a_std_error() {
    let err: Box<dyn std::error::Error> = Box::new(parse("t", "").unwrap_err());
    assert_eq!(err.to_string(), "t:1:1: missing 'litmus NAME' line");
}

#[test]
fn deep_conditions_get_an_error_not_a_stack_overflow() {
    // 64 levels parse; the 65th '~' or '(' is refused where it stands, and a line of a
    // million of them is refused as quickly (it once overflowed the stack).
    let ok = format!("{HEAD}exists {}x@1 == 0\n", "~".repeat(64));
    assert!(parse("t.litmus", &ok).is_ok());
    let deep = format!(
        "{HEAD}exists {}x@1 == 0{}\n",
        "(".repeat(65),
        ")".repeat(65)
    );
    assert_eq!(
        error(&deep),
        "t.litmus:4:72: expected an atom: a condition nests at most 64 '~' and '(' deep, \
         found '('"
    );
    for piece in ["~", "(", "~(", "(~"] {
        let huge = format!("{HEAD}exists {}x@1 == 0\n", piece.repeat(1_000_000));
        assert!(error(&huge).contains("nests at most 64"), "{piece}");
    }
}
