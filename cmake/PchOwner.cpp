// The translation unit that builds a precompiled header set (cmake/ScovillePch.cmake); it has no
// code of its own.
