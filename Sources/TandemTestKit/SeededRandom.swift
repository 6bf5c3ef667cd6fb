import TandemNetsim

/// A small, fast, seeded random number generator, so that simulations repeat exactly: the one
/// the impairment proxy ships with (SplitMix64), under the name the simulations use.
public typealias SeededRandom = ImpairmentRandom
