// Facts of the PNG format shared by the readers that walk image data (signature stamps, workspace logos).

/** Adam7 interlacing: each pass's first column and row and its column and row steps. */
export const ADAM7: readonly (readonly [number, number, number, number])[] = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
];
