// smp_rust — known shares in a Rust program, for sampling through the Rust
// standard library's start-up frames (std::rt::lang_start, and for threads
// std's thread_start and __rust_begin_short_backtrace):
// main -> work -> heavy (3 parts) and light (1 part), both -> mix, the
// leaf that does all the work.  With THREADS > 1, main starts that many
// std::thread workers running work() and joins them.
// Usage: smp_rust [THREADS [ROUNDS]]   (defaults 1, 100000: 0.5 s of CPU)
use std::env;
use std::thread;

#[inline(never)]
fn mix(mut x: u64, n: u64) -> u64 {
    for i in 0..n {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(i ^ (x >> 29));
    }
    x
}

#[inline(never)]
fn heavy(seed: u64, rounds: u64) -> u64 {
    let mut acc = seed;
    for _ in 0..rounds {
        acc ^= mix(acc, 3000);
    }
    acc
}

#[inline(never)]
fn light(seed: u64, rounds: u64) -> u64 {
    let mut acc = seed;
    for _ in 0..rounds {
        acc ^= mix(acc, 1000);
    }
    acc
}

#[inline(never)]
fn work(seed: u64, rounds: u64) -> u64 {
    heavy(seed, rounds) ^ light(seed, rounds)
}

fn main() {
    let args: Vec<String> = env::args().collect();
    let threads: u64 = args.get(1).map_or(1, |s| s.parse().expect("THREADS"));
    let rounds: u64 = args.get(2).map_or(100000, |s| s.parse().expect("ROUNDS"));
    let result = if threads <= 1 {
        work(1, rounds)
    } else {
        let workers: Vec<_> = (0..threads)
            .map(|t| thread::spawn(move || work(t + 1, rounds)))
            .collect();
        workers.into_iter().fold(0, |r, w| r ^ w.join().expect("worker"))
    };
    println!("{}", result);
}
