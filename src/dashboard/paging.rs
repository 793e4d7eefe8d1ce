//! [`Page`]: one window of a long list (`?offset=&limit=`), and the links to the next and the
//! previous window.

use serde::{Deserialize, Serialize};

/// The query parameters of a paginated list.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub struct PageQuery {
    /// First item shown (default 0).
    #[serde(default)]
    pub offset: Option<usize>,
    /// Items shown (default and maximum depend on the list).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Where a window sits in its list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Page {
    /// First item shown.
    pub offset: usize,
    /// Most items shown.
    pub limit: usize,
    /// Items in the whole list.
    pub total: usize,
    /// Offset of the next window, if there is one.
    pub next_offset: Option<usize>,
    /// Offset of the previous window, if there is one.
    pub prev_offset: Option<usize>,
}

impl Page {
    /// The window `query` asks for, with `default` items unless it says otherwise (at most `max`).
    pub fn new(query: PageQuery, total: usize, default: usize, max: usize) -> Self {
        let limit = query.limit.unwrap_or(default).clamp(1, max);
        let offset = query.offset.unwrap_or(0).min(total);
        Self {
            offset,
            limit,
            total,
            next_offset: (offset + limit < total).then_some(offset + limit),
            prev_offset: (offset > 0).then(|| offset.saturating_sub(limit)),
        }
    }

    /// The items of this window.
    pub fn slice<T>(&self, items: Vec<T>) -> Vec<T> {
        items
            .into_iter()
            .skip(self.offset)
            .take(self.limit)
            .collect()
    }

    /// The range of indices shown, for "1–50 of 1,000".
    pub fn shown(&self) -> (usize, usize) {
        let end = (self.offset + self.limit).min(self.total);
        (if self.total == 0 { 0 } else { self.offset + 1 }, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_move_and_stop_at_the_ends() {
        let query = |offset, limit| PageQuery {
            offset: Some(offset),
            limit: Some(limit),
        };
        let first = Page::new(PageQuery::default(), 120, 50, 200);
        assert_eq!(
            (first.offset, first.next_offset, first.prev_offset),
            (0, Some(50), None)
        );
        assert_eq!(first.shown(), (1, 50));
        let last = Page::new(query(100, 50), 120, 50, 200);
        assert_eq!((last.next_offset, last.prev_offset), (None, Some(50)));
        assert_eq!(last.shown(), (101, 120));
        assert_eq!(last.slice((0..120).collect::<Vec<_>>()).len(), 20);
        let capped = Page::new(query(500, 10_000), 120, 50, 200);
        assert_eq!((capped.offset, capped.limit), (120, 200));
        assert_eq!(Page::new(PageQuery::default(), 0, 50, 200).shown(), (0, 0));
    }
}
