//! Mapping a request's items where the request runs: in parallel on the rayon pool that runs it
//! (the evaluator's, from the handler), in order on any other thread (a request answered inline),
//! so that nothing falls into rayon's global pool.

use rayon::prelude::*;

/// `f` applied to every item and its position, the results in input order.
pub fn map_where_running<T, R, F>(items: Vec<T>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(usize, T) -> R + Sync + Send,
{
    if rayon::current_thread_index().is_some() {
        items.into_par_iter().enumerate().map(|(i, item)| f(i, item)).collect()
    } else {
        items.into_iter().enumerate().map(|(i, item)| f(i, item)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_on_a_pool_and_off_it() {
        let items: Vec<usize> = (0..1_000).collect();
        let want: Vec<usize> = (0..1_000).map(|i| i * 3).collect();
        let off_pool = map_where_running(items.clone(), |i, x| {
            assert_eq!(rayon::current_thread_index(), None, "went to a pool");
            i + 2 * x
        });
        assert_eq!(off_pool, want);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        assert_eq!(pool.install(|| map_where_running(items, |i, x| i + 2 * x)), want);
    }
}
