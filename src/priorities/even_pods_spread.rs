//! SKELETON: not implemented yet; `build` refuses, so a Policy naming it gets a startup error and
//! the default set leaves it out.

use std::sync::Arc;

use crate::priorities::{Priority, PriorityArgs};

pub fn build(_args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, String> {
    Err("is not implemented in this version".to_string())
}
