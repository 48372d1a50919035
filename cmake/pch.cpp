// The translation unit that compiles the shared precompiled header (CMakeLists.txt, SCOVILLE_PCH).
