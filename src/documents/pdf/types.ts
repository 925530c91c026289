// Shapes shared by the PDF modules. Every box is in PDF points, origin at the TOP-LEFT of the page as displayed
// (after /Rotate, inside the visible CropBox): the API's coordinate system.

export type FieldType = 'signature' | 'initials' | 'date' | 'text';
export const FIELD_TYPES: readonly FieldType[] = ['signature', 'initials', 'date', 'text'];

export type Box = { x: number; y: number; width: number; height: number };

export type Anchor = { type: FieldType; role: string; page: number; box: Box };

export type Field = { id: string; role: string; type: FieldType; page: number } & Box;

export type PageInfo = { width: number; height: number; rotation: number };

/** One problem found while checking a placement; `code` is the catalogue code sent on the wire. */
export type Problem = { code: string; message: string; meta?: Record<string, unknown> };
