-- Revert history-search:_delivery_problems from pg: back to its @v0.4.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/_delivery_problems@v0.4.0.sql
