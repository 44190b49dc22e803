//! The GA's operators, one trait each: [`Selection`], [`Crossover`] and [`Mutation`]. Every
//! operator is a small value built from the config and takes the RNG explicitly, so that the
//! caller decides which stream each draw comes from and runs stay reproducible.

use std::fmt::Debug;

use rand::RngExt;

use super::config::{
    Bounds, CrossoverConfig, CrossoverKind, MutationConfig, SelectionConfig, SelectionKind,
};
use super::genome::{gaussian, Genome};
use crate::agents::GameRng;

/// Chooses parents by fitness.
pub trait Selection: Debug + Send + Sync {
    /// `n` indices into `fitness` (values in [0, 1] or any non-negative scale), drawn with
    /// replacement, in the order parents are to be paired.
    fn select(&self, fitness: &[f64], n: usize, rng: &mut GameRng) -> Vec<usize>;
}

/// Makes children from two parents.
pub trait Crossover: Debug + Send + Sync {
    /// How many children one call of [`Crossover::cross`] returns.
    fn children_per_pair(&self) -> usize;
    /// Children of `a` and `b` (equal lengths), within `bounds` when the parents are.
    fn cross(&self, a: &[f64], b: &[f64], bounds: &Bounds, rng: &mut GameRng) -> Vec<Genome>;
}

/// Perturbs a child in place, keeping it within the bounds.
pub trait Mutation: Debug + Send + Sync {
    fn mutate(&self, genome: &mut [f64], bounds: &Bounds, rng: &mut GameRng);
}

/// The operator a selection config describes.
pub(crate) fn selection(config: &SelectionConfig) -> Box<dyn Selection> {
    match config.kind {
        SelectionKind::Roulette => Box::new(Roulette),
        SelectionKind::Tournament => Box::new(Tournament { k: config.k.max(1) }),
        SelectionKind::Rank => Box::new(Rank),
        SelectionKind::Sus => Box::new(Sus),
    }
}

/// The operator a crossover config describes.
pub(crate) fn crossover(config: &CrossoverConfig) -> Box<dyn Crossover> {
    match config.kind {
        CrossoverKind::AverageHybrid => Box::new(AverageHybrid),
        CrossoverKind::Average => Box::new(Average),
        CrossoverKind::Hybrid => Box::new(Hybrid),
        CrossoverKind::Uniform => Box::new(UniformCrossover),
        CrossoverKind::Blend => Box::new(Blend {
            alpha: config.alpha,
        }),
    }
}

/// The operator a mutation config describes.
pub(crate) fn mutation(config: &MutationConfig) -> Box<dyn Mutation> {
    Box::new(Gaussian {
        rate: config.rate,
        sigma: config.sigma,
    })
}

/// Draws an index with probability proportional to `weights` (non-negative); uniform when they
/// sum to zero, so that a generation where nobody scored still breeds.
fn spin(weights: &[f64], total: f64, rng: &mut GameRng) -> usize {
    if total <= 0.0 {
        return rng.random_range(0..weights.len());
    }
    let target = rng.random::<f64>() * total;
    let mut acc = 0.0;
    for (i, &w) in weights.iter().enumerate() {
        acc += w;
        if target < acc {
            return i;
        }
    }
    // Rounding can leave `target` a hair above the last partial sum: the last positive weight
    // owns that sliver.
    weights.iter().rposition(|&w| w > 0.0).unwrap_or(0)
}

fn non_negative(fitness: &[f64]) -> Vec<f64> {
    fitness
        .iter()
        .map(|&f| if f.is_finite() && f > 0.0 { f } else { 0.0 })
        .collect()
}

/// Fitness-proportional selection (the blog's).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Roulette;

impl Selection for Roulette {
    fn select(&self, fitness: &[f64], n: usize, rng: &mut GameRng) -> Vec<usize> {
        let weights = non_negative(fitness);
        let total: f64 = weights.iter().sum();
        (0..n).map(|_| spin(&weights, total, rng)).collect()
    }
}

/// The fittest of `k` individuals drawn uniformly with replacement (the first drawn wins ties).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tournament {
    pub k: usize,
}

impl Selection for Tournament {
    fn select(&self, fitness: &[f64], n: usize, rng: &mut GameRng) -> Vec<usize> {
        (0..n)
            .map(|_| {
                let mut best = rng.random_range(0..fitness.len());
                for _ in 1..self.k {
                    let c = rng.random_range(0..fitness.len());
                    if fitness[c] > fitness[best] {
                        best = c;
                    }
                }
                best
            })
            .collect()
    }
}

/// Linear ranking: the least fit has rank 1, the fittest rank n, equals share their mean rank;
/// probability proportional to rank. Keeps pressure when fitness values bunch together.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Rank;

/// Ranks 1..=n from least to most fit, equal values getting their mean rank.
pub(crate) fn ranks(fitness: &[f64]) -> Vec<f64> {
    let n = fitness.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| fitness[a].total_cmp(&fitness[b]));
    let mut ranks = vec![0.0; n];
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && fitness[order[j + 1]] == fitness[order[i]] {
            j += 1;
        }
        let mean_rank = (i + j) as f64 / 2.0 + 1.0;
        for &idx in &order[i..=j] {
            ranks[idx] = mean_rank;
        }
        i = j + 1;
    }
    ranks
}

impl Selection for Rank {
    fn select(&self, fitness: &[f64], n: usize, rng: &mut GameRng) -> Vec<usize> {
        let weights = ranks(fitness);
        let total: f64 = weights.iter().sum();
        (0..n).map(|_| spin(&weights, total, rng)).collect()
    }
}

/// Stochastic universal sampling: `n` evenly spaced pointers with one random offset over the
/// fitness wheel, so each individual gets within one of its expected number of copies. The
/// picks are shuffled afterwards, since in wheel order neighbours would always pair up.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Sus;

impl Selection for Sus {
    fn select(&self, fitness: &[f64], n: usize, rng: &mut GameRng) -> Vec<usize> {
        if n == 0 {
            return Vec::new();
        }
        let weights = non_negative(fitness);
        let total: f64 = weights.iter().sum();
        let mut picks = Vec::with_capacity(n);
        if total <= 0.0 {
            picks.extend((0..n).map(|_| rng.random_range(0..fitness.len())));
        } else {
            let step = total / n as f64;
            let start = rng.random::<f64>() * step;
            let mut acc = 0.0;
            let mut i = 0;
            for p in 0..n {
                let pointer = start + p as f64 * step;
                while i + 1 < weights.len() && acc + weights[i] <= pointer {
                    acc += weights[i];
                    i += 1;
                }
                picks.push(i);
            }
        }
        shuffle(&mut picks, rng);
        picks
    }
}

/// Fisher-Yates with the GA's own RNG.
fn shuffle<T>(items: &mut [T], rng: &mut GameRng) {
    for i in (1..items.len()).rev() {
        let j = rng.random_range(0..=i);
        items.swap(i, j);
    }
}

/// One child, the mean of the parents.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Average;

fn average(a: &[f64], b: &[f64], bounds: &Bounds) -> Genome {
    a.iter()
        .zip(b)
        .map(|(x, y)| bounds.clamp((x + y) / 2.0))
        .collect()
}

impl Crossover for Average {
    fn children_per_pair(&self) -> usize {
        1
    }
    fn cross(&self, a: &[f64], b: &[f64], bounds: &Bounds, _rng: &mut GameRng) -> Vec<Genome> {
        vec![average(a, b, bounds)]
    }
}

/// The blog's hybrid crossover generalised to a random cut: genes before the cut come from
/// the second parent, the rest from the first (the blog's cut is always after gene one). A
/// single gene is copied from a parent chosen at random.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Hybrid;

fn hybrid(a: &[f64], b: &[f64], rng: &mut GameRng) -> Genome {
    let n = a.len();
    if n < 2 {
        return if rng.random::<bool>() {
            a.to_vec()
        } else {
            b.to_vec()
        };
    }
    let cut = rng.random_range(1..n);
    b[..cut].iter().chain(&a[cut..]).copied().collect()
}

impl Crossover for Hybrid {
    fn children_per_pair(&self) -> usize {
        1
    }
    fn cross(&self, a: &[f64], b: &[f64], _bounds: &Bounds, rng: &mut GameRng) -> Vec<Genome> {
        vec![hybrid(a, b, rng)]
    }
}

/// The blog's pair of children: one [`Average`], one [`Hybrid`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct AverageHybrid;

impl Crossover for AverageHybrid {
    fn children_per_pair(&self) -> usize {
        2
    }
    fn cross(&self, a: &[f64], b: &[f64], bounds: &Bounds, rng: &mut GameRng) -> Vec<Genome> {
        vec![average(a, b, bounds), hybrid(a, b, rng)]
    }
}

/// Two complementary children: each gene goes to one child from either parent with
/// probability 1/2, and to the other child from the other parent.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct UniformCrossover;

impl Crossover for UniformCrossover {
    fn children_per_pair(&self) -> usize {
        2
    }
    fn cross(&self, a: &[f64], b: &[f64], _bounds: &Bounds, rng: &mut GameRng) -> Vec<Genome> {
        let mut c1 = Vec::with_capacity(a.len());
        let mut c2 = Vec::with_capacity(a.len());
        for (&x, &y) in a.iter().zip(b) {
            if rng.random::<bool>() {
                c1.push(x);
                c2.push(y);
            } else {
                c1.push(y);
                c2.push(x);
            }
        }
        vec![c1, c2]
    }
}

/// BLX-alpha: two children, each gene uniform in `[lo - alpha d, hi + alpha d]` where `lo`,
/// `hi` are the parents' genes and `d = hi - lo`, clamped to the bounds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Blend {
    pub alpha: f64,
}

impl Crossover for Blend {
    fn children_per_pair(&self) -> usize {
        2
    }
    fn cross(&self, a: &[f64], b: &[f64], bounds: &Bounds, rng: &mut GameRng) -> Vec<Genome> {
        let mut child = || -> Genome {
            a.iter()
                .zip(b)
                .map(|(&x, &y)| {
                    let (lo, hi) = (x.min(y), x.max(y));
                    let d = hi - lo;
                    let u = rng.random::<f64>();
                    bounds.clamp(lo - self.alpha * d + u * (1.0 + 2.0 * self.alpha) * d)
                })
                .collect()
        };
        let first = child();
        let second = child();
        vec![first, second]
    }
}

/// Gaussian mutation: each gene, with probability `rate`, moves by a normal deviate of
/// standard deviation `sigma`, then is clamped to the bounds (the blog's "rein it back in").
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gaussian {
    pub rate: f64,
    pub sigma: f64,
}

impl Mutation for Gaussian {
    fn mutate(&self, genome: &mut [f64], bounds: &Bounds, rng: &mut GameRng) {
        for gene in genome.iter_mut() {
            if rng.random::<f64>() < self.rate {
                *gene = bounds.clamp(*gene + self.sigma * gaussian(rng));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::rng_from_seed;
    use crate::ga::genome;

    fn all_crossovers() -> Vec<Box<dyn Crossover>> {
        CrossoverKind::ALL
            .iter()
            .map(|&kind| crossover(&CrossoverConfig { kind, alpha: 0.7 }))
            .collect()
    }

    #[test]
    fn crossover_and_mutation_keep_genes_in_bounds() {
        let mut rng = rng_from_seed(3);
        for bounds in [
            Bounds::default(),
            Bounds {
                min: -2.0,
                max: 0.5,
            },
        ] {
            let heavy = Gaussian {
                rate: 1.0,
                sigma: 5.0,
            };
            for op in all_crossovers() {
                for genes in [1, 2, 3, 10] {
                    for _ in 0..300 {
                        let a = genome::uniform(genes, &bounds, &mut rng);
                        // Parents on the bounds stress BLX's widening.
                        let b: Genome = (0..genes)
                            .map(|i| if i % 2 == 0 { bounds.min } else { bounds.max })
                            .collect();
                        let children = op.cross(&a, &b, &bounds, &mut rng);
                        assert_eq!(children.len(), op.children_per_pair(), "{op:?}");
                        for mut child in children {
                            assert_eq!(child.len(), genes);
                            assert!(
                                child.iter().all(|&g| bounds.contains(g)),
                                "{op:?} {child:?}"
                            );
                            heavy.mutate(&mut child, &bounds, &mut rng);
                            assert!(child.iter().all(|&g| bounds.contains(g)), "{child:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn crossovers_do_what_they_say() {
        let mut rng = rng_from_seed(5);
        let bounds = Bounds::default();
        let (wes, mara) = (
            [5.0 / 12.0, 1.0 / 12.0, 11.0 / 12.0],
            [7.0 / 12.0, 5.0 / 12.0, 9.0 / 12.0],
        );
        // The blog's example: Miles is the average.
        let miles = Average.cross(&wes, &mara, &bounds, &mut rng).remove(0);
        for (m, e) in miles.iter().zip([6.0 / 12.0, 3.0 / 12.0, 10.0 / 12.0]) {
            assert!((m - e).abs() < 1e-12);
        }
        // Sophie: a prefix from Mara, the rest from Wes; the blog's cut (after one gene) occurs.
        let mut cuts = [0; 3];
        for _ in 0..200 {
            let sophie = Hybrid.cross(&wes, &mara, &bounds, &mut rng).remove(0);
            let cut = (0..3).find(|&i| sophie[i] != mara[i]).unwrap_or(3);
            assert!((1..3).contains(&cut), "{sophie:?}");
            assert_eq!(&sophie[cut..], &wes[cut..]);
            cuts[cut] += 1;
        }
        assert!(cuts[1] > 50 && cuts[2] > 50, "{cuts:?}");
        // Uniform children are complementary.
        let kids = UniformCrossover.cross(&wes, &mara, &bounds, &mut rng);
        for i in 0..3 {
            let mut pair = [kids[0][i], kids[1][i]];
            pair.sort_by(f64::total_cmp);
            assert_eq!(pair, [wes[i].min(mara[i]), wes[i].max(mara[i])]);
        }
        // Blend with alpha 0 stays between the parents.
        for child in (Blend { alpha: 0.0 }).cross(&wes, &mara, &bounds, &mut rng) {
            for i in 0..3 {
                assert!(child[i] >= wes[i].min(mara[i]) && child[i] <= wes[i].max(mara[i]));
            }
        }
    }

    #[test]
    fn mutation_rate_and_sigma() {
        let mut rng = rng_from_seed(11);
        let op = Gaussian {
            rate: 0.1,
            sigma: 0.03,
        };
        let bounds = Bounds::default();
        let (mut changed, mut sum_sq, trials) = (0usize, 0.0, 20_000);
        for _ in 0..trials {
            let mut g = vec![0.5];
            op.mutate(&mut g, &bounds, &mut rng);
            if g[0] != 0.5 {
                changed += 1;
                sum_sq += (g[0] - 0.5) * (g[0] - 0.5);
            }
        }
        let rate = changed as f64 / trials as f64;
        assert!((rate - 0.1).abs() < 0.01, "{rate}");
        let sd = (sum_sq / changed as f64).sqrt();
        assert!((sd - 0.03).abs() < 0.003, "{sd}");
    }

    /// Mean picks of each individual over many draws.
    fn pick_counts(op: &dyn Selection, fitness: &[f64], rng: &mut GameRng) -> Vec<usize> {
        let mut counts = vec![0; fitness.len()];
        for _ in 0..2000 {
            for i in op.select(fitness, fitness.len(), rng) {
                counts[i] += 1;
            }
        }
        counts
    }

    #[test]
    fn selection_prefers_the_fitter() {
        let fitness = [0.1, 0.3, 0.5, 0.7, 0.9];
        let mut rng = rng_from_seed(13);
        for kind in SelectionKind::ALL {
            let op = selection(&SelectionConfig { kind: *kind, k: 3 });
            let counts = pick_counts(&*op, &fitness, &mut rng);
            assert!(
                counts.windows(2).all(|w| w[0] < w[1]),
                "{kind}: picks {counts:?} are not increasing with fitness"
            );
            let total: usize = counts.iter().sum();
            // Roulette and SUS pick in proportion to fitness: 0.9 / 2.5 of the picks.
            if matches!(kind, SelectionKind::Roulette | SelectionKind::Sus) {
                let share = counts[4] as f64 / total as f64;
                assert!((share - 0.36).abs() < 0.01, "{kind}: {share}");
            }
        }
    }

    #[test]
    fn selection_copes_with_zero_and_equal_fitness() {
        let mut rng = rng_from_seed(17);
        for kind in SelectionKind::ALL {
            let op = selection(&SelectionConfig { kind: *kind, k: 2 });
            let counts = pick_counts(&*op, &[0.0; 4], &mut rng);
            assert!(counts.iter().all(|&c| c > 1500), "{kind}: {counts:?}");
            // Nobody with zero fitness is picked by the proportional kinds.
            let picks = op.select(&[0.0, 1.0, 0.0], 100, &mut rng);
            if matches!(kind, SelectionKind::Roulette | SelectionKind::Sus) {
                assert!(picks.iter().all(|&i| i == 1), "{kind}");
            }
        }
        assert_eq!(ranks(&[0.5, 0.1, 0.5, 0.9]), vec![2.5, 1.0, 2.5, 4.0]);
    }

    #[test]
    fn sus_gives_each_its_expected_share() {
        let mut rng = rng_from_seed(19);
        let fitness = [1.0, 2.0, 3.0, 4.0];
        for _ in 0..100 {
            let mut counts = [0; 4];
            for i in Sus.select(&fitness, 10, &mut rng) {
                counts[i] += 1;
            }
            for (c, f) in counts.iter().zip(fitness) {
                let expected = f * 10.0 / 10.0;
                assert!((*c as f64 - expected).abs() < 1.0 + 1e-9, "{counts:?}");
            }
        }
    }
}
