// e2e_rust_panic — Rust panics caught by catch_unwind, through frames of
// their own and of the standard library, with cleanups (a Vec dropped)
// on the way: guarded(i) catches what top(i) -> mid(i), mid(i + 1) ->
// leaf throws; leaf panics when its argument is 3 modulo 7.  No
// __cxa_begin_catch is ever called: the unwinder's landings
// (_Unwind_SetIP) are the only sign of where the panic stopped.
//   e2e_rust_panic N    prints "sum S caught C"
use std::panic;

#[inline(never)]
fn leaf(x: u64) -> u64 {
    if x % 7 == 3 {
        panic!("boom {}", x);
    }
    x * 3
}

#[inline(never)]
fn mid(x: u64) -> u64 {
    let v = vec![x; 4];
    leaf(v[1]) + 1
}

#[inline(never)]
fn top(x: u64) -> u64 {
    mid(x) + mid(x + 1)
}

#[inline(never)]
fn guarded(x: u64) -> u64 {
    match panic::catch_unwind(|| top(x)) {
        Ok(v) => v,
        Err(_) => 0,
    }
}

fn main() {
    panic::set_hook(Box::new(|_| {}));
    let n: u64 = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(1000);
    let (mut s, mut caught) = (0u64, 0);
    for i in 0..n {
        let r = guarded(i);
        if r == 0 {
            caught += 1;
        }
        s = s.wrapping_add(r);
    }
    println!("sum {} caught {}", s, caught);
}
