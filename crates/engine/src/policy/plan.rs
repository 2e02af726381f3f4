//! A decoded Policy, validated and turned into the engine's [`Plan`]: every entry built through
//! the registry, the predicates ordered.
//!
//! Ordering: entries with `order` run first, ascending; equal orders keep the static order among
//! themselves; entries without `order` follow in static order. No `predicates` runs the default
//! set in static order; `predicates: []` runs only the mandatory ones ([`registry::MANDATORY_PREDICATES`]),
//! which every Policy runs, listed or not.

use std::sync::Arc;

use crate::engine::ordering::Settings;
use crate::engine::{OrderingMode, Plan, WeightedPriority};
use crate::framework::{AnyPredicate, MAX_PRIORITY};
use crate::policy::error::{EntryAt, PlanError};
use crate::policy::file::{PolicyFile, PredicatePolicy, PriorityPolicy};
use crate::policy::Overrides;
use crate::registry;
use crate::registry::validate::{build_predicates, build_priority, Entry};

/// `hardPodAffinitySymmetricWeight` when the Policy does not set it (or sets 0), as upstream.
pub const DEFAULT_HARD_POD_AFFINITY_WEIGHT: i64 = 1;

/// The registry's default priorities with their weights.
fn default_priorities(hard_weight: i64) -> Vec<WeightedPriority> {
    registry::default_priorities(hard_weight)
        .into_iter()
        .map(|(priority, weight)| WeightedPriority { priority, weight })
        .collect()
}

impl Plan {
    /// The default predicates in static order, stopping at the first failure, and the default
    /// priorities: what runs without a Policy file.
    pub fn default_plan() -> Plan {
        Plan {
            predicates: registry::default_predicates(),
            always_check_all: false,
            priorities: default_priorities(DEFAULT_HARD_POD_AFFINITY_WEIGHT),
            ..Plan::default()
        }
    }
}

/// Validates a decoded Policy and orders its predicates (`overrides` win over the file).
pub fn plan_from(policy: PolicyFile, overrides: Overrides) -> Result<Plan, PlanError> {
    match policy.kind.as_deref() {
        Some("Policy") => {}
        _ => return Err(PlanError::Kind { found: policy.kind }),
    }
    match policy.api_version.as_deref() {
        Some("v1") => {}
        _ => return Err(PlanError::ApiVersion { found: policy.api_version }),
    }
    let hard_weight = match policy.hard_pod_affinity_symmetric_weight {
        Some(w) if !(0..=100).contains(&w) => return Err(PlanError::HardPodAffinityWeight(w)),
        Some(w) if w > 0 => w,
        _ => DEFAULT_HARD_POD_AFFINITY_WEIGHT,
    };
    let priorities = match &policy.priorities {
        None => default_priorities(hard_weight),
        Some(entries) => plan_priorities(entries, hard_weight)?,
    };
    let from_file = match policy.predicate_ordering.as_deref() {
        None => OrderingMode::Static,
        Some(mode) => mode.parse().map_err(PlanError::Ordering)?,
    };
    let ordering = overrides.ordering.unwrap_or(from_file);

    let Some(entries) = policy.predicates else {
        let mut plan = Plan::default_plan();
        plan.always_check_all = policy.always_check_all_predicates;
        plan.priorities = priorities;
        return Ok(plan.with_ordering(ordering));
    };
    let placed = plan_predicates(&entries)?;
    let pinned = placed.iter().filter(|p| p.order.is_some()).count();
    let plan = Plan {
        predicates: placed.into_iter().map(|p| p.predicate).collect(),
        always_check_all: policy.always_check_all_predicates,
        priorities,
        ..Plan::default()
    };
    Ok(plan.with_ordering_pinned(ordering, pinned, Settings::default()))
}

fn at(list: &'static str, index: usize, name: &str) -> EntryAt {
    EntryAt { list, index, name: name.to_string() }
}

/// Checks what every entry needs whatever it names: a name, listed once.
fn check_name<T>(list: &'static str, entries: &[T], index: usize, name: impl Fn(&T) -> &str) -> Result<(), PlanError> {
    let this = name(&entries[index]);
    if this.is_empty() {
        return Err(PlanError::EmptyName { list, index });
    }
    if entries[..index].iter().any(|e| name(e) == this) {
        return Err(PlanError::ListedTwice(at(list, index, this)));
    }
    Ok(())
}

/// A built predicate and what orders it.
struct Placed {
    order: Option<i64>,
    rank: usize,
    index: usize,
    predicate: Arc<dyn AnyPredicate>,
}

/// The `predicates` entries, validated, built and ordered: those with `order` first by (order,
/// static rank), then the rest in static order. The sort is stable and the file index breaks the
/// remaining ties, so the result never depends on chance.
fn plan_predicates(entries: &[PredicatePolicy]) -> Result<Vec<Placed>, PlanError> {
    for (index, entry) in entries.iter().enumerate() {
        check_name("predicates", entries, index, |e| &e.name)?;
        if let Some(order) = entry.order.filter(|o| *o <= 0) {
            return Err(PlanError::Order { at: at("predicates", index, &entry.name), order });
        }
    }
    let wanted: Vec<Entry<'_>> =
        entries.iter().map(|e| Entry { name: &e.name, argument: e.argument.as_ref() }).collect();
    let built = build_predicates(&wanted)
        .map_err(|(index, source)| PlanError::Entry { at: at("predicates", index, &entries[index].name), source })?;
    let mut placed: Vec<Placed> = built
        .into_iter()
        .enumerate()
        .map(|(index, built)| Placed {
            order: entries[index].order,
            rank: built.rank,
            index,
            predicate: built.predicate,
        })
        .collect();
    // The mandatory predicates run whatever the Policy lists, in their static place.
    for name in registry::MANDATORY_PREDICATES {
        let Some((rank, _)) = registry::predicate_row_named(name) else { continue };
        if placed.iter().any(|p| p.rank == rank) {
            continue;
        }
        if let Some(predicate) = registry::predicate(name) {
            placed.push(Placed { order: None, rank, index: entries.len() + rank, predicate });
        }
    }
    placed.sort_by_key(|p| (p.order.is_none(), p.order.unwrap_or(0), p.rank, p.index));
    Ok(placed)
}

/// The `priorities` entries, validated and built (see [`build_priority`]).
fn plan_priorities(entries: &[PriorityPolicy], hard_weight: i64) -> Result<Vec<WeightedPriority>, PlanError> {
    let mut out = Vec::with_capacity(entries.len());
    let mut total_weight: i64 = 0;
    for (index, entry) in entries.iter().enumerate() {
        check_name("priorities", entries, index, |e| &e.name)?;
        let at = || at("priorities", index, &entry.name);
        if entry.weight <= 0 {
            return Err(PlanError::Weight { at: at(), weight: entry.weight });
        }
        total_weight = total_weight
            .checked_add(entry.weight)
            .filter(|t| t.checked_mul(MAX_PRIORITY).is_some())
            .ok_or_else(|| PlanError::WeightsOverflow(at()))?;
        let priority = build_priority(&entry.name, entry.argument.as_ref(), hard_weight)
            .map_err(|source| PlanError::Entry { at: at(), source })?;
        out.push(WeightedPriority { priority, weight: entry.weight });
    }
    Ok(out)
}
