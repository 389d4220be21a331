"""A factorial design: the design file, its conditions and option sets, and the sweep plan and rows."""
