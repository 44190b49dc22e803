//! Genomes: one real weight per feature, kept within [`Bounds`], and the statistics the GA
//! records about a population of them.

use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};

use super::config::Bounds;
use crate::agents::GameRng;

/// One individual's weights, in the order of the run's features.
pub(crate) use crate::tune::Genome;

/// A genome drawn uniformly within `bounds`.
pub(crate) fn uniform(genes: usize, bounds: &Bounds, rng: &mut GameRng) -> Genome {
    (0..genes)
        .map(|_| bounds.min + rng.random::<f64>() * bounds.width())
        .collect()
}

/// A genome drawn around `center` with a Gaussian of `sigma` per gene, clamped to `bounds`.
pub(crate) fn around(center: &[f64], sigma: f64, bounds: &Bounds, rng: &mut GameRng) -> Genome {
    center
        .iter()
        .map(|&c| bounds.clamp(c + sigma * gaussian(rng)))
        .collect()
}

/// A standard normal deviate (rand_distr's ziggurat: table look-ups and multiplications, with
/// `ln`/`exp` only in the rare tail and wedge cases).
#[inline]
pub(crate) fn gaussian(rng: &mut GameRng) -> f64 {
    StandardNormal.sample(rng)
}

/// Euclidean distance between two genomes.
pub(crate) fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

/// Mean Euclidean distance over all pairs of genomes (0 for fewer than two).
pub(crate) fn diversity(population: &[Genome]) -> f64 {
    let n = population.len();
    if n < 2 {
        return 0.0;
    }
    let mut total = 0.0;
    for i in 0..n {
        for j in i + 1..n {
            total += distance(&population[i], &population[j]);
        }
    }
    total / (n * (n - 1) / 2) as f64
}

/// Index of the fittest individual; the lowest index among equals.
pub(crate) fn best_index(fitness: &[f64]) -> usize {
    let mut best = 0;
    for (i, &f) in fitness.iter().enumerate() {
        if f > fitness[best] {
            best = i;
        }
    }
    best
}

/// Indices from fittest to least fit; equals keep their order.
pub(crate) fn ranking(fitness: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..fitness.len()).collect();
    order.sort_by(|&a, &b| fitness[b].total_cmp(&fitness[a]));
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::rng_from_seed;
    use crate::tune::FitnessStats;

    #[test]
    fn uniform_and_around_stay_in_bounds() {
        let bounds = Bounds {
            min: -0.5,
            max: 2.0,
        };
        let mut rng = rng_from_seed(7);
        for _ in 0..2000 {
            assert!(uniform(5, &bounds, &mut rng)
                .iter()
                .all(|&g| bounds.contains(g)));
            let g = around(&[-0.5, 2.0, 0.0, 1.0], 3.0, &bounds, &mut rng);
            assert!(g.iter().all(|&x| bounds.contains(x)), "{g:?}");
        }
    }

    #[test]
    fn stats_and_diversity() {
        let s = FitnessStats::of(&[0.25, 0.75, 0.5, 0.5]);
        assert_eq!((s.best, s.mean, s.min), (0.75, 0.5, 0.25));
        assert!((s.std - (0.125f64 / 4.0).sqrt()).abs() < 1e-12);
        let pop = vec![vec![0.0, 0.0], vec![3.0, 4.0], vec![0.0, 0.0]];
        assert!((diversity(&pop) - 10.0 / 3.0).abs() < 1e-12);
        assert_eq!(best_index(&[0.1, 0.9, 0.9]), 1);
        assert_eq!(ranking(&[0.1, 0.9, 0.5, 0.9]), vec![1, 3, 2, 0]);
    }
}
