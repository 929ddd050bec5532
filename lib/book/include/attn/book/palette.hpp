/// \file
/// \brief The book's colours, named once: every line, bar and arrow of every figure takes its
///        colour from here, so a chapter says `colour::red`, never `"#d6604d"`.
///
/// The colours are ColorBrewer's (Cynthia Brewer's palettes for maps, chosen to stay apart for
/// readers with the common forms of colour blindness): red and blue, diverging, for a pair
/// that is compared; the "Dark2" set (teal, dark orange, violet) for a model's curves; light
/// tints beside their full colour for two variants of one thing. The heatmaps' colour scales
/// are in plot.hpp (weight_palette()).
#pragma once

/// \brief The book's colours, by name (ColorBrewer's), for every figure.
namespace attn::book::colour {

inline constexpr const char* red = "#d6604d";           ///< the thing under study.
inline constexpr const char* blue = "#2166ac";          ///< what it is compared with.
inline constexpr const char* dark_grey = "#4d4d4d";     ///< a theory line, other words.
inline constexpr const char* grey = "#9e9e9e";          ///< background: inputs, "before".
inline constexpr const char* green = "#31a354";         ///< a third word.
inline constexpr const char* purple = "#756bb1";        ///< a fourth word.
inline constexpr const char* mid_blue = "#3182bd";      ///< one series on its own.
inline constexpr const char* light_blue = "#9ecae1";    ///< a tint of sky_blue.
inline constexpr const char* sky_blue = "#4292c6";      ///< blue's lighter partner.
inline constexpr const char* orange = "#e6550d";        ///< red's partner among tints.
inline constexpr const char* light_orange = "#fdae6b";  ///< a tint of orange and dark_orange.
inline constexpr const char* teal = "#1b9e77";          ///< Dark2: held-out, correct.
inline constexpr const char* dark_orange = "#d95f02";   ///< Dark2: training, the baseline.
inline constexpr const char* violet = "#7570b3";        ///< Dark2: a harder subset.
inline constexpr const char* light_green = "#a6dba0";   ///< a tint of teal.
inline constexpr const char* black = "#000000";         ///< text on a light cell.
inline constexpr const char* white = "#ffffff";         ///< text on a dark cell.

}  // namespace attn::book::colour
