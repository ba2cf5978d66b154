//! `unixbench.dhrystone`: Dhrystone 2.1 as UnixBench runs it (`dhry2reg`),
//! in loops per second.
//!
//! Reinhold Weicker's Dhrystone 2.1 (SIGPLAN Notices 23,8, 1988), ported
//! statement by statement from its C version: the same records, pointers,
//! string copies and comparisons, array stores, procedure calls and
//! branches per loop. UnixBench compiles it as two files, `dhry_1.c` (the
//! main loop and Proc_1 to Proc_5) and `dhry_2.c` (Proc_6 to Proc_8 and
//! Func_1 to Func_3), so the compiler sees neither file's functions while
//! compiling the other: it cannot inline the second file's procedures into
//! the first, nor assume anything about their arguments. Here the second
//! file's functions called from the first are `#[inline(never)]` and their
//! addresses escape (see [`separate_compilation`]), which keeps the
//! optimiser from specialising them for the constant arguments it sees;
//! within the second file it may inline as gcc does (Func_3 into Proc_6,
//! Func_1 into Func_2). String comparison is the C library's `strcmp`, as in
//! C.
//!
//! The numbers still depend on the compiler, as Dhrystone's own rules say:
//! UnixBench builds it with `gcc -O3 -ffast-math -march=native`, sledge
//! with rustc (LLVM). `bench/unixbench.sh` shows the ratio.

use std::ffi::c_char;
use std::hint::black_box;

use super::case::{UnixbenchCase, copies_param, time_param};
use super::program::Program;
use super::protocol::Gate;
use super::score::Outcome;
use super::timed;
use crate::engine::{Case, CaseEnv, IndexEntry, ParamSet, ParamSpec, Params, RunSection, Workload};

/// Loops between two looks at the clock: about 0.1-0.5 ms of work.
const LOOPS_PER_BATCH: u64 = 4096;

/// Dhrystone's enumeration `{Ident_1, ..., Ident_5}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Ident {
    One,
    Two,
    Three,
    Four,
    Five,
}

/// `Str_30`: 30 characters and the terminating NUL.
pub type Str30 = [u8; 31];

/// `Rec_Type` with its first variant (the only one the program uses):
/// a pointer to the next record, a discriminant, an enumeration, an
/// integer and a string.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Record {
    pub ptr_comp: *mut Record,
    pub discr: Ident,
    pub enum_comp: Ident,
    pub int_comp: i32,
    pub str_comp: Str30,
}

const SOME_STRING: &Str30 = b"DHRYSTONE PROGRAM, SOME STRING\0";
const FIRST_STRING: &Str30 = b"DHRYSTONE PROGRAM, 1'ST STRING\0";
const SECOND_STRING: &Str30 = b"DHRYSTONE PROGRAM, 2'ND STRING\0";
const THIRD_STRING: &Str30 = b"DHRYSTONE PROGRAM, 3'RD STRING\0";

/// Dhrystone's global variables.
pub struct Globals {
    ptr_glob: *mut Record,
    next_ptr_glob: *mut Record,
    int_glob: i32,
    bool_glob: bool,
    ch_1_glob: u8,
    ch_2_glob: u8,
    arr_1_glob: [i32; 50],
    arr_2_glob: [[i32; 50]; 50],
}

/// The local variables of the main program that the published version
/// prints at the end, kept so a test can compare them with the expected
/// values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Locals {
    pub int_1_loc: i32,
    pub int_2_loc: i32,
    pub int_3_loc: i32,
    pub enum_loc: Ident,
    pub str_1_loc: Str30,
    pub str_2_loc: Str30,
}

/// One Dhrystone program: its globals, its two heap records and the count
/// of loops run so far (`Run_Index`).
pub struct Dhrystone {
    globals: Globals,
    run_index: i32,
    locals: Locals,
}

impl Dhrystone {
    /// The program's initialisation: two records, `Ptr_Glob` pointing to
    /// `Next_Ptr_Glob`, and `Arr_2_Glob[8][7] = 10`.
    pub fn new() -> Self {
        let next = Box::into_raw(Box::new(Record {
            ptr_comp: std::ptr::null_mut(),
            discr: Ident::One,
            enum_comp: Ident::One,
            int_comp: 0,
            str_comp: [0; 31],
        }));
        let glob = Box::into_raw(Box::new(Record {
            ptr_comp: next,
            discr: Ident::One,
            enum_comp: Ident::Three,
            int_comp: 40,
            str_comp: *SOME_STRING,
        }));
        let mut globals = Globals {
            ptr_glob: glob,
            next_ptr_glob: next,
            int_glob: 0,
            bool_glob: false,
            ch_1_glob: 0,
            ch_2_glob: 0,
            arr_1_glob: [0; 50],
            arr_2_glob: [[0; 50]; 50],
        };
        globals.arr_2_glob[8][7] = 10;
        Dhrystone {
            globals,
            run_index: 0,
            locals: Locals {
                int_1_loc: 0,
                int_2_loc: 0,
                int_3_loc: 0,
                enum_loc: Ident::One,
                str_1_loc: *FIRST_STRING,
                str_2_loc: [0; 31],
            },
        }
    }

    /// Runs `loops` more passes of the main loop.
    pub fn run(&mut self, loops: u64) {
        separate_compilation();
        let g = &mut self.globals;
        let str_1_loc: Str30 = self.locals.str_1_loc;
        let mut str_2_loc: Str30 = self.locals.str_2_loc;
        let mut int_1_loc: i32 = 0;
        let mut int_2_loc: i32 = 0;
        let mut int_3_loc: i32 = 0;
        let mut enum_loc = Ident::One;
        for _ in 0..loops {
            self.run_index = self.run_index.wrapping_add(1);
            let run_index = self.run_index;

            proc_5(g);
            proc_4(g);
            // Ch_1_Glob == 'A', Ch_2_Glob == 'B', Bool_Glob == true
            int_1_loc = 2;
            int_2_loc = 3;
            str_2_loc = *SECOND_STRING;
            enum_loc = Ident::Two;
            g.bool_glob = !func_2(&str_1_loc, &str_2_loc, g);
            // Bool_Glob == 1
            while int_1_loc < int_2_loc {
                // loop body executed once
                int_3_loc = 5 * int_1_loc - int_2_loc;
                // Int_3_Loc == 7
                proc_7(int_1_loc, int_2_loc, &mut int_3_loc);
                // Int_3_Loc == 7
                int_1_loc += 1;
            }
            // Int_1_Loc == 3, Int_2_Loc == 3, Int_3_Loc == 7
            proc_8(g, int_1_loc, int_3_loc);
            // Int_Glob == 5
            proc_1(g.ptr_glob, g);
            let mut ch_index = b'A';
            while ch_index <= g.ch_2_glob {
                // loop body executed twice
                if enum_loc == func_1(ch_index, b'C', g) {
                    // then, not executed
                    proc_6(Ident::One, &mut enum_loc, g);
                    str_2_loc = *THIRD_STRING;
                    int_2_loc = run_index;
                    g.int_glob = run_index;
                }
                ch_index += 1;
            }
            // Int_1_Loc == 3, Int_2_Loc == 3, Int_3_Loc == 7
            int_2_loc *= int_1_loc;
            int_1_loc = int_2_loc / int_3_loc;
            int_2_loc = 7 * (int_2_loc - int_3_loc) - int_1_loc;
            // Int_1_Loc == 1, Int_2_Loc == 13, Int_3_Loc == 7
            proc_2(&mut int_1_loc, g);
            // Int_1_Loc == 5
        }
        self.locals = Locals {
            int_1_loc,
            int_2_loc,
            int_3_loc,
            enum_loc,
            str_1_loc,
            str_2_loc,
        };
    }

    /// The loops run so far.
    pub fn runs(&self) -> i32 {
        self.run_index
    }

    /// The main program's locals after the last loop.
    pub fn locals(&self) -> Locals {
        self.locals
    }

    /// The globals' values the published program prints at the end:
    /// `(Int_Glob, Bool_Glob, Ch_1_Glob, Ch_2_Glob, Arr_1_Glob[8],
    /// Arr_2_Glob[8][7])`.
    pub fn global_values(&self) -> (i32, bool, u8, u8, i32, i32) {
        let g = &self.globals;
        (
            g.int_glob,
            g.bool_glob,
            g.ch_1_glob,
            g.ch_2_glob,
            g.arr_1_glob[8],
            g.arr_2_glob[8][7],
        )
    }

    /// Copies of the two records: `(*Ptr_Glob, *Next_Ptr_Glob)`, and whether
    /// both records point to the same next record, as they should.
    pub fn records(&self) -> (Record, Record, bool) {
        // SAFETY: both pointers come from Box::into_raw in `new` and are
        // freed only in Drop.
        let (glob, next) = unsafe { (*self.globals.ptr_glob, *self.globals.next_ptr_glob) };
        (glob, next, glob.ptr_comp == next.ptr_comp)
    }
}

impl Default for Dhrystone {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Dhrystone {
    fn drop(&mut self) {
        // SAFETY: both records were made by Box::into_raw in `new`, are
        // distinct, and are freed here once.
        unsafe {
            drop(Box::from_raw(self.globals.ptr_glob));
            drop(Box::from_raw(self.globals.next_ptr_glob));
        }
    }
}

/// Proc_1: executed once per loop, with `Ptr_Val_Par == Ptr_Glob`.
#[inline]
fn proc_1(ptr_val_par: *mut Record, g: &mut Globals) {
    // SAFETY: every record pointer the program follows points to one of
    // the two live records made in `Dhrystone::new`; raw pointers (no
    // references) are used because the records alias each other as in C.
    unsafe {
        let next_record = (*ptr_val_par).ptr_comp;
        // == Ptr_Glob_Next
        *(*ptr_val_par).ptr_comp = *g.ptr_glob; // structassign
        (*ptr_val_par).int_comp = 5;
        (*next_record).int_comp = (*ptr_val_par).int_comp;
        (*next_record).ptr_comp = (*ptr_val_par).ptr_comp;
        proc_3(&raw mut (*next_record).ptr_comp, g);
        // Ptr_Val_Par->Ptr_Comp->Ptr_Comp == Ptr_Glob->Ptr_Comp
        if (*next_record).discr == Ident::One {
            // then, executed
            (*next_record).int_comp = 6;
            proc_6((*ptr_val_par).enum_comp, &mut (*next_record).enum_comp, g);
            (*next_record).ptr_comp = (*g.ptr_glob).ptr_comp;
            proc_7((*next_record).int_comp, 10, &mut (*next_record).int_comp);
        } else {
            // not executed
            *ptr_val_par = *(*ptr_val_par).ptr_comp;
        }
    }
}

/// Proc_2: `*Int_Par_Ref == 1`, becomes 4.
#[inline]
fn proc_2(int_par_ref: &mut i32, g: &Globals) {
    let mut int_loc = *int_par_ref + 10;
    let mut enum_loc = Ident::One;
    loop {
        // executed once
        if g.ch_1_glob == b'A' {
            // then, executed
            int_loc -= 1;
            *int_par_ref = int_loc - g.int_glob;
            enum_loc = Ident::One;
        }
        if enum_loc == Ident::One {
            break;
        }
    }
}

/// Proc_3: `Ptr_Ref_Par` becomes `Ptr_Glob`'s next record.
#[inline]
fn proc_3(ptr_ref_par: *mut *mut Record, g: &mut Globals) {
    // SAFETY: as in proc_1.
    unsafe {
        if !g.ptr_glob.is_null() {
            // then, executed
            *ptr_ref_par = (*g.ptr_glob).ptr_comp;
        }
        proc_7(10, g.int_glob, &mut (*g.ptr_glob).int_comp);
    }
}

/// Proc_4: without parameters.
#[inline]
fn proc_4(g: &mut Globals) {
    let bool_loc = g.ch_1_glob == b'A';
    g.bool_glob |= bool_loc;
    g.ch_2_glob = b'B';
}

/// Proc_5: without parameters.
#[inline]
fn proc_5(g: &mut Globals) {
    g.ch_1_glob = b'A';
    g.bool_glob = false;
}

/// Makes the functions of dhry_2.c that dhry_1.c calls look as they do to
/// a C compiler compiling dhry_1.c: external, with callers it cannot see.
/// Their addresses escape through `black_box`, so the optimiser may not
/// propagate the constant arguments of this file's calls into them (an
/// address-taken function must work for any caller), as gcc cannot across
/// UnixBench's two files. Costs nothing in the loop.
#[inline(never)]
fn separate_compilation() {
    black_box([
        proc_6 as fn(Ident, &mut Ident, &Globals) as *const (),
        proc_7 as fn(i32, i32, &mut i32) as *const (),
        proc_8 as fn(&mut Globals, i32, i32) as *const (),
        func_1 as fn(u8, u8, &mut Globals) -> Ident as *const (),
        func_2 as fn(&Str30, &Str30, &mut Globals) -> bool as *const (),
    ]);
}

/// Proc_6 (dhry_2.c): `Enum_Val_Par == Ident_3`, `*Enum_Ref_Par` becomes
/// `Ident_2`.
#[inline(never)]
fn proc_6(enum_val_par: Ident, enum_ref_par: &mut Ident, g: &Globals) {
    *enum_ref_par = enum_val_par;
    if !func_3(enum_val_par) {
        // then, not executed
        *enum_ref_par = Ident::Four;
    }
    match enum_val_par {
        Ident::One => *enum_ref_par = Ident::One,
        Ident::Two => {
            *enum_ref_par = if g.int_glob > 100 {
                Ident::One
            } else {
                Ident::Four
            }
        }
        Ident::Three => *enum_ref_par = Ident::Two, // executed
        Ident::Four => {}
        Ident::Five => *enum_ref_par = Ident::Three,
    }
}

/// Proc_7 (dhry_2.c): executed three times per loop.
#[inline(never)]
fn proc_7(int_1_par_val: i32, int_2_par_val: i32, int_par_ref: &mut i32) {
    let int_loc = int_1_par_val + 2;
    *int_par_ref = int_2_par_val + int_loc;
}

/// Proc_8 (dhry_2.c): `Int_1_Par_Val == 3`, `Int_2_Par_Val == 7`.
#[inline(never)]
fn proc_8(g: &mut Globals, int_1_par_val: i32, int_2_par_val: i32) {
    let int_loc = (int_1_par_val + 5) as usize;
    // One check that every index below is in its array (C checks none),
    // instead of one per store.
    assert!(
        (1..20).contains(&int_loc),
        "Proc_8: Int_1_Par_Val out of range"
    );
    g.arr_1_glob[int_loc] = int_2_par_val;
    g.arr_1_glob[int_loc + 1] = g.arr_1_glob[int_loc];
    g.arr_1_glob[int_loc + 30] = int_loc as i32;
    // Int_Loc to Int_Loc + 1, both included.
    for int_index in int_loc..int_loc + 2 {
        g.arr_2_glob[int_loc][int_index] = int_loc as i32;
    }
    g.arr_2_glob[int_loc][int_loc - 1] += 1;
    g.arr_2_glob[int_loc + 20][int_loc] = g.arr_1_glob[int_loc];
    g.int_glob = 5;
}

/// Func_1 (dhry_2.c): executed three times per loop, twice from the main
/// loop (dhry_1.c) and once from Func_2, which may inline it.
#[inline(never)]
fn func_1(ch_1_par_val: u8, ch_2_par_val: u8, g: &mut Globals) -> Ident {
    func_1_body(ch_1_par_val, ch_2_par_val, g)
}

/// Func_1's statements, for the callers in its own file.
#[inline(always)]
fn func_1_body(ch_1_par_val: u8, ch_2_par_val: u8, g: &mut Globals) -> Ident {
    let ch_1_loc = ch_1_par_val;
    let ch_2_loc = ch_1_loc;
    if ch_2_loc != ch_2_par_val {
        // then, executed
        Ident::One
    } else {
        // not executed
        g.ch_1_glob = ch_1_loc;
        Ident::Two
    }
}

/// Func_2 (dhry_2.c): executed once per loop, on the 1'ST and 2'ND strings.
#[inline(never)]
fn func_2(str_1_par_ref: &Str30, str_2_par_ref: &Str30, g: &mut Globals) -> bool {
    let mut ch_loc = b'A';
    let mut int_loc: usize = 2;
    while int_loc <= 2 {
        // loop body executed once
        if func_1_body(str_1_par_ref[int_loc], str_2_par_ref[int_loc + 1], g) == Ident::One {
            // then, executed
            ch_loc = b'A';
            int_loc += 1;
        }
    }
    if (b'W'..b'Z').contains(&ch_loc) {
        // then, not executed
        int_loc = 7;
    }
    if ch_loc == b'R' {
        // then, not executed
        true
    } else if strcmp(str_1_par_ref, str_2_par_ref) > 0 {
        // then, not executed
        int_loc += 7;
        g.int_glob = int_loc as i32;
        true
    } else {
        // executed
        false
    }
}

/// Func_3 (dhry_2.c): `Enum_Par_Val == Ident_3`; only Proc_6, in the same
/// file, calls it.
#[inline]
fn func_3(enum_par_val: Ident) -> bool {
    let enum_loc = enum_par_val;
    enum_loc == Ident::Three
}

/// The C library's `strcmp`, as the C version calls it.
fn strcmp(a: &Str30, b: &Str30) -> i32 {
    debug_assert!(a.contains(&0) && b.contains(&0));
    // SAFETY: both arrays hold a NUL within their 31 bytes (every string
    // the program stores is a 30-character literal and its NUL).
    unsafe { libc::strcmp(a.as_ptr().cast::<c_char>(), b.as_ptr().cast::<c_char>()) }
}

/// The `unixbench.dhrystone` workload.
pub struct DhrystoneWorkload;

impl Workload for DhrystoneWorkload {
    fn id(&self) -> &'static str {
        "unixbench.dhrystone"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "Dhrystone 2.1 loops per second; UnixBench's dhry2reg (\"Dhrystone 2 using register variables\")"
    }
    fn params(&self) -> Vec<ParamSpec> {
        DhrystoneWorkloadParams::specs()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = DhrystoneWorkloadParams::from_set(p);
        Ok(Box::new(UnixbenchCase::new(
            self.id(),
            Program::Dhrystone,
            p.copies,
            p.time,
            None,
        )?))
    }

    fn index_entry(&self, _params: &ParamSet) -> Option<IndexEntry> {
        Some(IndexEntry::Test("dhry2reg"))
    }
    fn run_section(&self) -> Option<&'static dyn RunSection> {
        Some(&super::index::SystemIndex)
    }
}

crate::workload_params! {
    /// The parameters of `unixbench.dhrystone`.
    pub struct DhrystoneWorkloadParams {
        copies: u64 = copies_param(),
        time: f64 = time_param("10"),
    }
}

/// One copy: Dhrystone loops for `seconds`.
pub fn run_copy(seconds: f64, gate: &mut Gate) -> anyhow::Result<Outcome> {
    let mut dhrystone = Dhrystone::new();
    gate.open()?;
    Ok(timed::run_for::<std::convert::Infallible>(
        seconds,
        LOOPS_PER_BATCH,
        |n| {
            dhrystone.run(n);
            Ok(())
        },
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values the published program prints after its runs ("should
    /// be" in dhry_1.c).
    #[test]
    fn final_values_are_the_published_ones() {
        let runs = 1000;
        let mut d = Dhrystone::new();
        d.run(600);
        d.run(400);
        assert_eq!(d.runs(), runs);
        let (int_glob, bool_glob, ch_1, ch_2, arr_1_8, arr_2_8_7) = d.global_values();
        assert_eq!(int_glob, 5);
        assert!(bool_glob);
        assert_eq!(ch_1, b'A');
        assert_eq!(ch_2, b'B');
        assert_eq!(arr_1_8, 7);
        // "should be: Number_Of_Runs + 10"
        assert_eq!(arr_2_8_7, runs + 10);

        let (glob, next, same_next) = d.records();
        assert!(same_next, "Ptr_Comp: same as above");
        assert_eq!(glob.discr, Ident::One);
        assert_eq!(glob.enum_comp, Ident::Three);
        assert_eq!(glob.int_comp, 17);
        assert_eq!(&glob.str_comp, SOME_STRING);
        assert_eq!(next.discr, Ident::One);
        assert_eq!(next.enum_comp, Ident::Two);
        assert_eq!(next.int_comp, 18);
        assert_eq!(&next.str_comp, SOME_STRING);

        let l = d.locals();
        assert_eq!((l.int_1_loc, l.int_2_loc, l.int_3_loc), (5, 13, 7));
        assert_eq!(l.enum_loc, Ident::Two);
        assert_eq!(&l.str_1_loc, FIRST_STRING);
        assert_eq!(&l.str_2_loc, SECOND_STRING);
    }

    #[test]
    fn a_copy_counts_its_loops() {
        let outcome = run_copy(0.05, &mut Gate::open_at_once()).unwrap();
        assert!(outcome.seconds >= 0.05);
        assert_eq!(outcome.count % LOOPS_PER_BATCH as f64, 0.0);
        assert!(outcome.count >= LOOPS_PER_BATCH as f64);
    }

    #[test]
    fn strcmp_orders_like_c() {
        assert!(strcmp(FIRST_STRING, SECOND_STRING) < 0);
        assert!(strcmp(THIRD_STRING, SECOND_STRING) > 0);
        assert_eq!(strcmp(SOME_STRING, SOME_STRING), 0);
    }
}
