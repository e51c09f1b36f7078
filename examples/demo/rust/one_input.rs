pub fn level(points: u32) -> u32 {
    if points == 1337 {
        return 3;
    }
    if points >= 1000 {
        return 10;
    }
    points / 100
}
