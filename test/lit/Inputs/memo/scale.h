// The header memo.test edits to show that a changed header invalidates the memo.
#pragma once
constexpr float kOffset = 1.0f;
