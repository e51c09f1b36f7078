pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {
    let m: i32 = if x > lo { x } else { lo };
    if m < hi { m } else { hi }
}
